/**
 * The local GL adapter's connect page: where a person picks an accounting service and
 * completes the flow. Submitting posts `{service}` to the page's own URL + `/complete`
 * (`POST /workspace/gl/connect/<consumerId>/complete`, served beside the page, see
 * ./mount.ts), which makes the session's tenant's connection ACTIVE; the UI meanwhile
 * polls /v1/gl/status.
 */
import { GL_SERVICES } from "../../domain/glServices.js"

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** The page; `preselected` (the session's serviceId) is checked when it is one of the offered services. */
export const glConnectPage = (preselected: string | undefined): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Connect your general ledger</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d2433}
fieldset{border:1px solid #ccd;border-radius:.5rem;padding:1rem}label{display:block;margin:.4rem 0}
button{margin-top:1rem;padding:.5rem 1.2rem;font-size:1rem}#done{display:none;color:#176d2d}
</style>
</head>
<body>
<h1>Connect your general ledger</h1>
<form id="connect">
<fieldset><legend>Accounting service</legend>
${
  GL_SERVICES.map(([id, name]) =>
    `<label><input type="radio" name="service" value="${id}"${id === (preselected ?? GL_SERVICES[0][0]) ? " checked" : ""}> ${escape(name)}</label>`
  ).join("\n")
}
</fieldset>
<button type="submit">Authorize</button>
</form>
<p id="done">Connected. You can close this window.</p>
<p id="error" role="alert"></p>
<script>
// The completion is this page's own path + /complete: it works behind a path prefix too.
const complete = location.pathname.replace(/[/]+$/, "") + "/complete";
document.getElementById("connect").addEventListener("submit", async (event) => {
  event.preventDefault();
  const service = new FormData(event.target).get("service");
  const res = await fetch(complete, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ service })
  });
  if (res.ok) { event.target.style.display = "none"; document.getElementById("done").style.display = "block"; }
  else { document.getElementById("error").textContent = (await res.json()).message; }
});
</script>
</body>
</html>
`
