/**
 * The typed client as an integrator gets it (README "The typed client"): the package the build
 * writes to dist/client, packed with `npm pack` and unpacked into a project's node_modules beside
 * its peer dependencies (what `npm install <tarball>` does, without the network), then
 *
 * - the README's plain-Node example run with `node` (no tsx, no loader) against a built gateway;
 * - the README's Effect example and a consumer of the declarations type-checked with `tsc`
 *   (`"module": "nodenext"`), the example then run from tsc's output;
 * - the package's files, imports and version checked: only the client and the contract, only
 *   `effect` imported (its HTTP and HttpApi modules are parts of it in Effect 4), the version
 *   the served OpenAPI document's.
 *
 * Plain `node` is the checkout's Node 24 (node_modules/.bin/node, what npm puts first on PATH),
 * whatever the machine's is.
 *
 * And `tenant-gateway/client` (the checkout itself as a dependency, as after `npm link`) imports
 * under plain Node too.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const PACKAGE_DIR = join(ROOT, "dist", "client")
const NAME = "@tenant-gateway/client"
const ROOT_PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string
  dependencies: Record<string, string>
}
const PEERS = ["effect"]
/** The Node the README's examples run on: the pinned Node 24 (engines >=24.11 <25). */
const NODE = join(ROOT, "node_modules", ".bin", "node")
/** The machine's own Node when it is of the 20 line (the client's engines: >=20.3). */
const OLD_NODE = ["/usr/bin/node", "/usr/local/bin/node"].find((bin) => {
  try {
    return /^v20\.([3-9]|\d{2,})\./.test(execFileSync(bin, ["--version"], { encoding: "utf8" }))
  } catch {
    return false
  }
})

/** The fenced code block that follows the README's marker comment naming `file`. */
const readmeBlock = (file: string): string => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const m = new RegExp(`<!-- test/client/package\\.test\\.ts [^>]*this block: ${escaped} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(readme)
  if (m === null) throw new Error(`README.md has no block marked for ${file}`)
  return m[1]! + "\n"
}

/**
 * Runs a command to its end. Not spawnSync: this process's event loop keeps running, so its
 * pooled connections to the gateway see the gateway close them when idle (a blocked loop would
 * reuse a closed one afterwards).
 */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.once("error", reject)
    child.once("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

/** Links `node_modules/<name>` of `app` to the checkout's copy (installed as a peer would be). */
const linkDependency = (app: string, name: string) => {
  const target = join(app, "node_modules", name)
  mkdirSync(dirname(target), { recursive: true })
  symlinkSync(join(ROOT, "node_modules", name), target, "dir")
}

const filesUnder = (dir: string, base = dir): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), base) : [relative(base, join(dir, e.name))]
  ).map((f) => f.split("\\").join("/"))

describe("the typed client package, installed by an integrator", { timeout: 180_000 }, () => {
  let gw: RunningService
  let dir = ""
  let app = ""
  let installed = ""
  let packed: { filename: string; name: string; version: string; files: Array<{ path: string }> }
  let entities: Array<{ id: string; slug: string; name: string }>
  let devDependencies: Array<string> = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-client-package-"))
    gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}` })
    entities = (await http("GET", `${gw.url}/v1/entities`)).body
    const pack = await run("npm", ["pack", PACKAGE_DIR, "--pack-destination", dir, "--json", "--silent"], dir)
    expect(pack.status, pack.stderr).toBe(0)
    packed = (JSON.parse(pack.stdout) as Array<typeof packed>)[0]!
    app = join(dir, "app")
    installed = join(app, "node_modules", ...NAME.split("/"))
    mkdirSync(installed, { recursive: true })
    // The integrating project as the README sets it up; its dev dependencies linked from here.
    const manifest = JSON.parse(readmeBlock("package.json")) as { type?: string; devDependencies?: Record<string, string> }
    writeFileSync(join(app, "package.json"), JSON.stringify(manifest))
    devDependencies = Object.keys(manifest.devDependencies ?? {}).filter((name) => name !== "typescript")
    const untar = await run("tar", ["-xzf", join(dir, packed.filename), "-C", installed, "--strip-components=1"], dir)
    expect(untar.status, untar.stderr).toBe(0)
    for (const name of [...PEERS, ...devDependencies]) linkDependency(app, name)
  }, 120_000)

  afterAll(async () => {
    await gw?.stop()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("is named and versioned as the API, with effect as its only peer", async () => {
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"))
    const openapi = (await http("GET", `${gw.url}/openapi.json`)).body
    expect(manifest.name).toBe(NAME)
    expect(packed.name).toBe(NAME)
    expect(manifest.version).toBe(ROOT_PACKAGE.version)
    expect(openapi.info.version).toBe(ROOT_PACKAGE.version)
    expect(manifest.private).toBeUndefined()
    expect(manifest.type).toBe("module")
    expect(manifest.engines).toEqual({ node: ">=20.3" })
    expect(manifest.exports["."]).toEqual({ types: "./index.d.ts", import: "./index.js", default: "./index.js" })
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(manifest.peerDependencies).toEqual(Object.fromEntries(PEERS.map((p) => [p, `^${ROOT_PACKAGE.dependencies[p]}`])))
  })

  it("holds the client and the contract only, and imports nothing but its peers", () => {
    const files = packed.files.map((f) => f.path).sort()
    expect(files).toContain("index.js")
    expect(files).toContain("index.d.ts")
    expect(files).toContain("types/client/index.d.ts")
    expect(files.filter((f) => !/^(package\.json|index\.js|index\.d\.ts|types\/(api|client|upstream)\/[\w.]+\.d\.ts)$/.test(f))).toEqual([])
    expect(filesUnder(installed).sort()).toEqual(files)
    const code = readFileSync(join(installed, "index.js"), "utf8")
    const imported = new Set([...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((m) => m[1]!))
    expect(imported.size).toBeGreaterThan(0)
    expect([...imported].filter((s) => !/^effect(\/[\w/-]+)?$/.test(s))).toEqual([])
    // The contract is bundled (its schemas), the server is not (its routes, its settings).
    // esbuild names each bundled source in a comment: the client and the contract, nothing else.
    const sources = [...new Set([...code.matchAll(/^\/\/ (src\/\S+)$/gm)].map((m) => m[1]!))]
    expect(sources).toContain("src/client/index.ts")
    expect(sources).toContain("src/api/Api.ts")
    expect(sources.filter((f) => !/^src\/(api|client)\/\w+\.ts$|^src\/upstream\/(registry|links|webhooks|errors|paths)\.ts$/.test(f))).toEqual([])
  })

  it("runs the README's plain-Node example with node", async () => {
    const file = join(app, "list.js")
    writeFileSync(file, readmeBlock("list.js"))
    const version = await run(NODE, ["-p", "process.versions.node"], app)
    expect(version.stdout.trim()).toMatch(/^24\.(1[1-9]|[2-9]\d)\.\d+$/)
    const result = await run(NODE, [file], app, { GATEWAY_URL: gw.url })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines.slice(0, entities.length)).toEqual(entities.map((e) => `entity ${e.slug}: ${e.name}`))
    expect(lines[entities.length]).toMatch(/^\d+ tasks, [1-9]\d* open$/)
    expect(lines[entities.length + 1]).toMatch(/^task ".+" is IN_PROGRESS, step: .+$/)
    expect(lines[entities.length + 2]).toMatch(/^404 Not Found: .+/)
    expect(lines).toHaveLength(entities.length + 3)
  })

  it.skipIf(!OLD_NODE)("runs the README's plain-Node example on the oldest Node line its engines allow (20)", async () => {
    const file = join(app, "list.js")
    writeFileSync(file, readmeBlock("list.js"))
    const result = await run(OLD_NODE!, [file], app, { GATEWAY_URL: gw.url })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(entities.length + 3)
  })

  it("type-checks the README's Effect example and a consumer with tsc (nodenext), and runs the example", async () => {
    writeFileSync(join(app, "tasks.ts"), readmeBlock("tasks.ts"))
    // Types that degrade to `any` (unresolved declarations) would make these lines compile:
    // each @ts-expect-error then fails the check.
    writeFileSync(
      join(app, "consumer.ts"),
      [
        `import { API_VERSION, createGatewayClient, isTerminalStatus, NotFound, type GatewayClient, type PromiseClient } from "${NAME}"`,
        `const gw: PromiseClient<GatewayClient> = createGatewayClient("http://127.0.0.1:3000", { headers: { "x-forwarded-email": "a@example.com" } })`,
        `export const names: Promise<ReadonlyArray<string>> = gw.entities.listEntities().then((es) => es.map((e) => e.name))`,
        `export const version: string = API_VERSION`,
        `export const done: boolean = isTerminalStatus("COMPLETED")`,
        `export const isNotFound = (e: unknown): number | undefined => (e instanceof NotFound ? e.statusCode : undefined)`,
        `// @ts-expect-error the path parameter is required`,
        `void gw.entities.listTasks({ path: {} })`,
        `// @ts-expect-error no such method`,
        `void gw.entities.listEverything()`,
        `// @ts-expect-error the action's type is one of the contract's`,
        `void gw.tasks.action({ path: { taskId: "t" }, payload: { type: "no-such-action" } })`,
        `// @ts-expect-error a status is a string`,
        `isTerminalStatus(1)`,
        ""
      ].join("\n")
    )
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["ES2022", "DOM"],
          types: ["node"],
          strict: true,
          skipLibCheck: false,
          outDir: "out",
          rootDir: "."
        },
        files: ["tasks.ts", "consumer.ts"]
      })
    )
    const tsc = await run(NODE, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], app)
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.status).toBe(0)
    const result = await run(NODE, [join(app, "out", "tasks.js")], app, { GATEWAY_URL: gw.url })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    const tasks = (await http("GET", `${gw.url}/v1/entities/${entities[0]!.id}/tasks`)).body as Array<{ id: string; status: string }>
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines.map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual(tasks.map((t) => `${t.id} ${t.status}`))
    // The compiled example on the oldest Node line the engines allow, where the machine has one.
    if (OLD_NODE !== undefined) {
      const old = await run(OLD_NODE, [join(app, "out", "tasks.js")], app, { GATEWAY_URL: gw.url })
      expect(old.stderr).toBe("")
      expect(old.stdout).toBe(result.stdout)
    }
  })
})

describe("tenant-gateway/client from the checkout (npm link)", { timeout: 60_000 }, () => {
  it("imports under plain node", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-client-link-"))
    try {
      const gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}` })
      try {
        mkdirSync(join(dir, "node_modules"))
        symlinkSync(ROOT, join(dir, "node_modules", "tenant-gateway"), "dir")
        const file = join(dir, "linked.mjs")
        writeFileSync(
          file,
          `import { createGatewayClient } from "tenant-gateway/client"\n` +
            `const entities = await createGatewayClient(process.env.GATEWAY_URL).entities.listEntities()\n` +
            `console.log(entities.map((e) => e.slug).join(","))\n`
        )
        const result = await run(NODE, [file], dir, { GATEWAY_URL: gw.url })
        expect(result.stderr).toBe("")
        const entities = (await http("GET", `${gw.url}/v1/entities`)).body as Array<{ slug: string }>
        expect(result.stdout.trim()).toBe(entities.map((e) => e.slug).join(","))
      } finally {
        await gw.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
