// This package's modules that hold definitions @mcp-worker/core and @mcp-worker/caller already hold, made from them
// (gitignored): one source, and nothing to install, since this workspace does not hold the repository's packages.
// - lib/caller/: the caller's Effect-free modules as it compiles them: each error tag's fields, defaults and message,
//   the stack rule (C97), and the plain types this package's operations share.
// - src/McpWorkerError.ts, src/WorkerStatus.ts, src/ErrorStack.ts, src/internal/effectRuntime.ts: core's modules in
//   Effect 4's words (the few calls whose form differs), down to the line where core's own part begins.
// Run by `build`, `typecheck`, `test`, the root's postinstall and scripts/run.mjs.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const root = path.resolve(here, "../..")
// The caller's modules this package runs; of the others it takes only the declarations, for their plain types.
const callerRuntime = ["ErrorStack.js", "McpWorkerError.js"]
const coreModules = ["ErrorStack", "McpWorkerError", "WorkerStatus", "internal/effectRuntime"]
const ownPart = "// The Effect 3 face's own, below"

const copyCaller = () => {
  const tsc = path.join(root, "node_modules/typescript/bin/tsc")
  const built = spawnSync(process.execPath, [tsc, "-b", path.join(root, "packages/caller")], { stdio: "inherit" })
  if (built.status !== 0) throw new Error(`tsc -b packages/caller failed (${built.status ?? built.signal})`)
  const dist = path.join(root, "packages/caller/dist")
  const lib = path.join(here, "lib/caller")
  fs.rmSync(lib, { recursive: true, force: true })
  fs.mkdirSync(lib, { recursive: true })
  const files = fs
    .readdirSync(dist, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".d.ts") || callerRuntime.includes(f))
  for (const file of files) {
    // The caller's source maps point into its own tree, which no install of this package holds.
    const text = fs.readFileSync(path.join(dist, file), "utf8").replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n")
    fs.mkdirSync(path.dirname(path.join(lib, file)), { recursive: true })
    fs.writeFileSync(path.join(lib, file), text)
  }
}

/** Core's module `source` as this package's, `depth` folders below src: Effect 4's `Literals` and `Union` take arrays. */
export const toEffect4 = (source, depth = 0) => {
  const cut = source.indexOf(ownPart)
  return (cut === -1 ? source : source.slice(0, cut).trimEnd() + "\n")
    .replace(/^import \* as Either from "effect\/Either"\n/m, "")
    .replace(/"@mcp-worker\/caller\/([A-Za-z]+)"/g, `"${"../".repeat(depth + 1)}lib/caller/$1.js"`)
    .replace(/Schema\.Literal\(\.\.\.([\w.]+)\)/g, "Schema.Literals($1)")
    .replace(/Schema\.Literal\(("[^"]*"(?:, "[^"]*")+)\)/g, "Schema.Literals([$1])")
    .replace(/Schema\.Union\(\.\.\./g, "Schema.Union(")
}

const writeFromCore = () => {
  for (const name of coreModules) {
    const source = fs.readFileSync(path.join(root, "packages/core/src", `${name}.ts`), "utf8")
    const note = `// Made from @mcp-worker/core's ${name}.ts by scripts/generate.mjs: edit that one.\n`
    // After the module's doc comment, which stays first for docgen.
    const text = toEffect4(source, name.split("/").length - 1).replace(/\*\/\n/, (end) => end + note)
    fs.writeFileSync(path.join(here, "src", `${name}.ts`), text)
  }
}

/** Writes lib/caller and this package's modules made from core's. */
export const generate = () => {
  copyCaller()
  writeFromCore()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) generate()
