/**
 * The layout, checked from the sources' own imports: every folder of `src` has a place
 * in LAYERS, every import between folders points down that table, no two folders import each
 * other (directly or round a cycle), and the contracts import no implementation.
 *
 * A new folder gets a row here; an import that fails this test goes to the lower folder, or the
 * thing it needs moves down (see the README's Layout section).
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
const SRC = join(ROOT, "src")

/**
 * Top to bottom: a folder may import only folders on a later row. Folders on one row are
 * independent of each other. `main` is `src/main.ts`, the composition root.
 */
const LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ["main", "console"],
  ["cli"],
  ["gateway"],
  ["mcp"],
  ["handlers"],
  ["files", "workspace"],
  ["services"],
  ["observability"],
  ["client"],
  ["domain"],
  ["upstream"],
  ["http"],
  ["api", "config"],
  ["lib"]
]

/** The contracts: what each may import besides itself (no implementation, no runtime kit). */
const CONTRACTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  api: [],
  upstream: ["api"]
}

/**
 * Folders only some may import, though lower: the gateway reaches its workspace through the
 * port (src/upstream/WorkspaceClient.ts), and only the composition root picks the implementation.
 */
const PRIVATE: Readonly<Record<string, ReadonlyArray<string>>> = {
  workspace: ["main"]
}

/** Imports that point down yet are refused: the use cases serve every front end (HTTP, MCP, CLI). */
const REFUSED: ReadonlyArray<readonly [from: string, to: string]> = [
  ["services", "http"],
  ["services", "gateway"],
  ["domain", "services"],
  ["config", "observability"]
]

/**
 * The runtime kits by import specifier (Effect 4 ships HTTP, HttpApi, SQL and CLI inside
 * `effect`; the Node bindings and drivers are packages of their own).
 */
const KITS: Readonly<Record<string, RegExp>> = {
  http: /^(effect\/(http|http-api)|@effect\/platform-node)(\/|$)/,
  sql: /^(effect\/sql|@effect\/sql-\w+)(\/|$)/,
  cli: /^effect\/cli(\/|$)/
}

/** Kits a folder may import, where it is restricted: the contracts only the HttpApi definitions. */
const KIT_IMPORTS: Readonly<Record<string, RegExp | null>> = {
  api: /^effect\/http-api(\/|$)/,
  upstream: /^effect\/http-api(\/|$)/,
  // The use cases, the domain rules and the runtime helpers know no HTTP, SQL or CLI (README).
  services: null,
  domain: null,
  lib: null
}

const SOURCE = /\.(ts|tsx|mts|mjs)$/

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : SOURCE.test(name) ? [path] : []
  })

/** The folder of `src` a file belongs to (`main` for the files at its root). */
const folderOf = (file: string): string => {
  const parts = relative(SRC, file).split(sep)
  return parts.length === 1 ? "main" : parts[0]!
}

const repoPath = (file: string) => relative(ROOT, file).split(sep).join("/")

interface Import {
  readonly from: string
  readonly to: string
  readonly fromFolder: string
  readonly toFolder: string
}

/** Every import specifier of a file (static, type-only, re-export, dynamic). */
const specifiersOf = (file: string): ReadonlyArray<string> =>
  ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((ref) => ref.fileName)

/** Every relative import that leaves `src` or not. */
const imports: ReadonlyArray<Import> = sourceFiles(SRC).flatMap((file) =>
  specifiersOf(file)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec))
    .filter((target) => target.startsWith(SRC + sep))
    .map((target) => ({ from: repoPath(file), to: repoPath(target), fromFolder: folderOf(file), toFolder: folderOf(target) }))
)

const between = imports.filter((i) => i.fromFolder !== i.toFolder)

const rank = new Map(LAYERS.flatMap((row, index) => row.map((folder) => [folder, index] as const)))

const describeImport = (i: Import) => `${i.from} imports ${i.to} (${i.fromFolder} -> ${i.toFolder})`

/** Strongly connected components (Tarjan) of a graph given as its edges. */
const components = (edges: ReadonlyArray<readonly [string, string]>): Array<Array<string>> => {
  const next = new Map<string, Set<string>>()
  for (const [a, b] of edges) next.set(a, (next.get(a) ?? new Set()).add(b))
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const v of next.keys()) if (!index.has(v)) visit(v)
  return found
}

/** Files that import each other round a cycle, by their paths with `.js` read as the source file. */
const fileCycles = (): Array<string> => {
  const known = new Set(sourceFiles(SRC).map(repoPath))
  const source = (path: string) =>
    [path, path.replace(/\.js$/, ".ts"), path.replace(/\.js$/, ".tsx"), path.replace(/\.mjs$/, ".mts")]
      .find((candidate) => known.has(candidate)) ?? path
  const edges = imports.map((i) => [i.from, source(i.to)] as const)
  return components(edges).map((component) => component.join(" <-> "))
}

/** The folder graph's cycles, each as its folders. */
const folderCycles = (): Array<Array<string>> => components(between.map((i) => [i.fromFolder, i.toFolder] as const))

/** The shortest cycle through a component's first folder: [a, b, ..., a]. */
const shortestCycle = (component: ReadonlyArray<string>): Array<string> => {
  const start = component[0]!
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of new Set(between.filter((i) => i.fromFolder === v && component.includes(i.toFolder)).map((i) => i.toFolder))) {
      if (w === start) {
        const path = [start, v]
        for (let u = v; u !== start; u = previous.get(u)!) path.push(previous.get(u)!)
        return path.reverse()
      }
      if (!previous.has(w)) {
        previous.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start]
}

/** The constructors of service keys: `Context.Service`, `Context.Reference`, a middleware's `Service`. */
const KEY_CONSTRUCTOR = /^(Context\.(Service|Reference|Tag|GenericTag)|HttpApiMiddleware\.(Service|Tag))$/

/**
 * The key a class heritage or an initializer declares, if it is a service key: the string
 * argument anywhere along a call chain rooted at a KEY_CONSTRUCTOR, e.g.
 * `Context.Service<A, S>()("k")`, `Context.Reference<S>("k", {...})`, `Context.Service<S>("k")`.
 */
const keyOf = (expression: ts.Expression, source: ts.SourceFile): string | undefined => {
  let key: string | undefined
  let node: ts.Expression = expression
  while (ts.isCallExpression(node)) {
    const first = node.arguments[0]
    if (first !== undefined && ts.isStringLiteral(first)) key = first.text
    node = node.expression
  }
  return KEY_CONSTRUCTOR.test(node.getText(source)) ? key : undefined
}

/** Every service key declared in src, with the class or const that holds it. */
const serviceKeys = (): Array<{ readonly file: string; readonly name: string; readonly key: string }> =>
  sourceFiles(SRC).flatMap((file) => {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
    const found: Array<{ readonly file: string; readonly name: string; readonly key: string }> = []
    const visit = (node: ts.Node) => {
      if (ts.isClassDeclaration(node) && node.name !== undefined) {
        for (const clause of node.heritageClauses ?? []) {
          for (const type of clause.types) {
            const key = keyOf(type.expression, source)
            if (key !== undefined) found.push({ file, name: node.name.text, key })
          }
        }
      } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
        const key = keyOf(node.initializer, source)
        if (key !== undefined) found.push({ file, name: node.name.text, key })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    return found
  })

describe("the layout of src (README: Layout)", () => {
  it("finds the imports it checks", () => {
    expect(between.length).toBeGreaterThan(50)
  })

  it("places every folder of src in the layer table", () => {
    const unplaced = [...new Set(sourceFiles(SRC).map(folderOf))].filter((folder) => !rank.has(folder))
    expect(unplaced, "folders missing from LAYERS in test/architecture/layout.test.ts").toEqual([])
  })

  it("imports between folders point down the layer table", () => {
    const upward = between
      .filter((i) => rank.has(i.fromFolder) && rank.has(i.toFolder))
      .filter((i) => rank.get(i.toFolder)! <= rank.get(i.fromFolder)!)
      .map(describeImport)
    expect(upward, "imports against the layer order").toEqual([])
  })

  it("reaches the private folders only from their importers", () => {
    const leaks = between
      .filter((i) => i.toFolder in PRIVATE && !PRIVATE[i.toFolder]!.includes(i.fromFolder))
      .map(describeImport)
    expect(leaks, "imports of a private folder").toEqual([])
  })

  it("refuses the imports the table would allow but the layout does not", () => {
    const refused = between
      .filter((i) => REFUSED.some(([from, to]) => i.fromFolder === from && i.toFolder === to))
      .map(describeImport)
    expect(refused, "refused imports").toEqual([])
  })

  it("has no import cycle between files", () => {
    expect(fileCycles(), "files that import each other, round each cycle").toEqual([])
  })

  it("has no import cycle between folders", () => {
    const cycles = folderCycles().map((component) => {
      const path = shortestCycle(component)
      return path.slice(0, -1).map((folder, k) => describeImport(between.find((i) => i.fromFolder === folder && i.toFolder === path[k + 1])!)).join("; ")
    })
    expect(cycles, "folder cycles, one import per step").toEqual([])
  })

  it("keys every service by its file's folder and its class name", () => {
    const keys = serviceKeys().filter(({ key }) => !key.startsWith("@"))
    expect(keys.length, "service keys found in src").toBeGreaterThan(15)
    const misnamed = keys
      .filter(({ file, key, name }) => key !== `${dirname(relative(SRC, file)).split(sep).join("/").replace(/^\.$/, "main")}/${name}`)
      .map(({ file, key, name }) => `${repoPath(file)}: ${name} is keyed "${key}"`)
    expect(misnamed, "service keys outside the scheme <folder under src>/<class name>").toEqual([])
  })

  it("imports the HTTP, SQL and CLI kits only where the layout has them", () => {
    const misplaced = sourceFiles(SRC).flatMap((file) => {
      const folder = folderOf(file)
      if (!(folder in KIT_IMPORTS)) return []
      const allowed = KIT_IMPORTS[folder]!
      return specifiersOf(file)
        .filter((spec) => Object.values(KITS).some((kit) => kit.test(spec)) && !(allowed?.test(spec) ?? false))
        .map((spec) => `${repoPath(file)} imports ${spec} (${folder})`)
    })
    expect(misplaced, "kit imports outside their folders").toEqual([])
  })

  it("imports no effect/unstable module (effect 4.1 has none; only the SQLite driver's are mapped)", () => {
    const unstable = sourceFiles(SRC).flatMap((file) =>
      specifiersOf(file).filter((spec) => spec.startsWith("effect/unstable/")).map((spec) => `${repoPath(file)} imports ${spec}`)
    )
    expect(unstable).toEqual([])
  })

  it("the contracts import no implementation", () => {
    const leaks = between
      .filter((i) => i.fromFolder in CONTRACTS && !CONTRACTS[i.fromFolder]!.includes(i.toFolder))
      .map(describeImport)
    expect(leaks, "contract imports of implementation").toEqual([])
  })
})
