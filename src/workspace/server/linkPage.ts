/**
 * The page a decision link opens (./linkRoutes.ts): in the console's style and words, it names
 * the task, the entity, the step and what the person decides, and asks them to confirm. Only its
 * own script's POST to the page's own URL decides; opening, prefetching or rendering the page
 * (an e-mail scanner, a chat preview) changes nothing. Pages for links that no longer work say why.
 *
 * Everything shown is escaped text; the one script and the one style are allowed by their hashes
 * (Content-Security-Policy), nothing else runs or loads.
 */
import { createHash } from "node:crypto"

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** Abbreviations kept in capitals, as the console's words do (src/console/words.ts). */
const ACRONYMS = new Set(["gl", "id", "vat", "url", "iban", "bic", "po", "sku", "ap", "ar", "api", "csv", "pdf"])

/** `amount_gross` -> "Amount gross", `glAccount` -> "GL account" (the console's rule). */
const humanize = (key: string): string => {
  const words = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[\s_-]+/).filter((w) => w !== "").map((w) => w.toLowerCase())
  if (words.length === 0) return key
  return words.map((w, i) => (ACRONYMS.has(w) ? w.toUpperCase() : i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w)).join(" ")
}

const STYLE = `:root{--fg:#1d2433;--muted:#4a5468;--line:#c9cfdb;--accent:#1f4fbf;--ok:#176d2d;--bad:#a61b1b;--bg-soft:#f3f5f9}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--fg);background:#fff;overflow-wrap:break-word}
header{padding:.3rem 1.2rem;border-bottom:1px solid var(--line);background:var(--bg-soft);font-weight:700;min-height:2rem;display:flex;align-items:center}
main{max-width:44rem;margin:0 auto;padding:1rem 1.2rem 3rem}h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .6rem}
a{color:var(--accent)}:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.3rem 1rem;margin:0}dt{font-weight:600}dd{margin:0}
.panel{border:1px solid var(--line);border-radius:.4rem;padding:.6rem .9rem;margin:.6rem 0}
.scroll-region{overflow-x:auto}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th{font-weight:600;background:var(--bg-soft)}
label{font-weight:600;display:block;margin-bottom:.15rem}textarea{font:inherit;width:100%;min-height:4rem;padding:.3rem .45rem;border:1px solid #6b7385;border-radius:.25rem}
button{font:inherit;min-height:2.75rem;padding:.3rem .9rem;border:1px solid var(--accent);border-radius:.3rem;background:var(--accent);color:#fff;cursor:pointer}
button.danger{background:var(--bad);border-color:var(--bad)}button:disabled{opacity:.6;cursor:default}
.actions{display:flex;gap:.6rem;margin-top:.6rem;flex-wrap:wrap;align-items:center}.hint{color:var(--muted);font-size:.9rem}
.error{color:var(--bad);font-weight:600}.ok{color:var(--ok);font-weight:600}.field{margin:.7rem 0}`

/**
 * Sends the decision: a same-origin JSON POST to this page's own URL (the gateway refuses any
 * other site's write, and a body that is not JSON), then tells the answer.
 */
const SCRIPT = `const form = document.getElementById("decide");
const out = document.getElementById("result");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector("button");
  button.disabled = true;
  out.className = ""; out.textContent = "Sending…";
  const comments = document.getElementById("comments").value.trim();
  try {
    const res = await fetch(location.pathname, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(comments === "" ? {} : { comments })
    });
    const body = await res.json().catch(() => ({}));
    if (res.ok) {
      form.hidden = true;
      out.className = "ok";
      out.textContent = form.dataset.done + " You can close this page.";
    } else {
      out.className = "error";
      out.textContent = (body && typeof body.message === "string" ? body.message : "The decision was not recorded (" + res.status + ").");
      if (res.status < 500 && res.status !== 429) form.hidden = true; else button.disabled = false;
    }
  } catch (e) {
    out.className = "error"; out.textContent = "The gateway could not be reached; nothing was decided. Try again.";
    button.disabled = false;
  }
});
`

const hash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The page's policy: its own style and script by hash, requests only to its own origin, never framed. */
export const LINK_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hash(STYLE)}`,
  `script-src ${hash(SCRIPT)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

export interface LinkPageTask {
  readonly taskId: string
  readonly taskTitle: string
  readonly entityName: string | undefined
  readonly stepTitle: string
  /** The step's args, as its next step shows them (amounts, rows). */
  readonly args: Record<string, unknown>
}

const shell = (title: string, body: string, script: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>Tasks</header>
<main>
${body}
</main>
${script ? `<script>${SCRIPT}</script>` : ""}
</body>
</html>
`

const isScalar = (v: unknown): v is string | number | boolean => typeof v === "string" || typeof v === "number" || typeof v === "boolean"

const text = (v: unknown): string => (v === null || v === undefined ? "" : isScalar(v) ? String(v) : JSON.stringify(v))

/** Rows shown at most (the rest are counted). */
const MAX_ROWS = 50

/** What the step shows: its scalar args as a list, its rows (args.rows) as a table. */
const argsView = (args: Record<string, unknown>): string => {
  const scalars = Object.entries(args).filter(([, v]) => isScalar(v))
  const rows = Array.isArray(args.rows) ? args.rows as ReadonlyArray<unknown> : []
  const parts: Array<string> = []
  if (scalars.length > 0) {
    parts.push(`<div class="panel"><dl>${scalars.map(([k, v]) => `<dt>${escape(humanize(k))}</dt><dd>${escape(text(v))}</dd>`).join("")}</dl></div>`)
  }
  if (rows.length > 0) {
    const fieldsOf = (row: unknown): Record<string, unknown> => {
      const r = row as { fields?: unknown } | null
      const fields = r !== null && typeof r === "object" && typeof r.fields === "object" && r.fields !== null ? r.fields : r
      return typeof fields === "object" && fields !== null ? fields as Record<string, unknown> : { value: row }
    }
    const shown = rows.slice(0, MAX_ROWS).map(fieldsOf)
    const columns = [...new Set(shown.flatMap((f) => Object.keys(f)))].slice(0, 8)
    parts.push(`<h2>Rows (${rows.length})</h2><div class="scroll-region" role="region" aria-label="Rows" tabindex="0"><table>
<thead><tr>${columns.map((c) => `<th scope="col">${escape(humanize(c))}</th>`).join("")}</tr></thead>
<tbody>${shown.map((f) => `<tr>${columns.map((c) => `<td>${escape(text(f[c]))}</td>`).join("")}</tr>`).join("\n")}</tbody>
</table></div>${rows.length > MAX_ROWS ? `<p class="hint">The first ${MAX_ROWS} of ${rows.length} rows; the console shows them all.</p>` : ""}`)
  }
  return parts.join("\n")
}

const WHAT: Readonly<Record<"approve" | "reject", { verb: string; done: string; says: string; button: string }>> = {
  approve: {
    verb: "Approve",
    done: "Approved.",
    says: "Approving completes this step; the task moves on as its workflow says.",
    button: "Approve"
  },
  reject: {
    verb: "Reject",
    done: "Rejected.",
    says: "The step is decided as rejected and the task moves on as its workflow says.",
    button: "Reject step"
  }
}

const facts = (task: LinkPageTask, actor: string, expiresAt: string | undefined) =>
  `<div class="panel"><dl>
<dt>Task</dt><dd>${escape(task.taskTitle)}</dd>
${task.entityName !== undefined ? `<dt>Entity</dt><dd>${escape(task.entityName)}</dd>` : ""}
<dt>Step</dt><dd>${escape(task.stepTitle)}</dd>
<dt>Decided as</dt><dd>${escape(actor)}</dd>
${expiresAt !== undefined ? `<dt>Link works until</dt><dd><time datetime="${escape(expiresAt)}">${escape(expiresAt.replace("T", " ").replace(/\.\d+Z$/, " UTC"))}</time></dd>` : ""}
</dl></div>`

/** The confirmation page of a working link. */
export const linkConfirmPage = (
  decision: "approve" | "reject",
  task: LinkPageTask,
  actor: string,
  expiresAt: string
): string => {
  const w = WHAT[decision]
  return shell(
    `${w.verb} “${task.stepTitle}”?`,
    `<h1>${escape(w.verb)} “${escape(task.stepTitle)}”?</h1>
<p>${escape(w.says)} Nothing is decided until you confirm below; this link works once, for you only.</p>
${facts(task, actor, expiresAt)}
${argsView(task.args)}
<form id="decide" class="panel" aria-label="Decision" data-done="${escape(w.done)}">
<div class="field"><label for="comments">Comments (optional)</label><textarea id="comments" maxlength="10000"></textarea></div>
<div class="actions"><button type="submit"${decision === "reject" ? " class=\"danger\"" : ""}>${escape(w.button)}</button></div>
</form>
<noscript><p class="error">This page needs JavaScript to record your decision.</p></noscript>
<p id="result" role="status" aria-live="polite"></p>`,
    true
  )
}

/** The page of a link that does not work (or no longer): what happened, and that nothing changed. */
export const linkProblemPage = (title: string, why: string, task?: LinkPageTask, actor?: string): string =>
  shell(
    title,
    `<h1>${escape(title)}</h1>
<p role="alert">${escape(why)}</p>
<p>Nothing was changed by opening this link.</p>
${task !== undefined && actor !== undefined ? facts(task, actor, undefined) : ""}`,
    false
  )
