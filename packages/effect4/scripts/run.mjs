// Runs an Effect 4 program of this repository that lives outside this workspace (examples/effect4, bench/effect4):
// bundles its entries with esbuild, `effect` and `@mcp-worker/effect4` resolved in this workspace (the root's
// `effect` is Effect 3), the implementation left external so it finds its owner files, then runs the first entry
// with this Node. Usage: node packages/effect4/scripts/run.mjs <entry.ts> [other entries…] [-- args…]
import { spawn } from "node:child_process"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { generate } from "./generate.mjs"
import { effect4Resolution } from "./resolution.mjs"

const argv = process.argv.slice(2)
const split = argv.indexOf("--")
const entries = (split < 0 ? argv : argv.slice(0, split)).map((entry) => path.resolve(entry))
const args = split < 0 ? [] : argv.slice(split + 1)
if (entries.length === 0) {
  console.error("usage: node packages/effect4/scripts/run.mjs <entry.ts> [other entries…] [-- args…]")
  process.exit(2)
}

generate()
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-effect4-run-"))
await esbuild.build({
  entryPoints: entries.map((entry) => ({ in: entry, out: path.basename(entry).replace(/\.ts$/, "") })),
  outdir: dir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  banner: {
    js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
  },
  plugins: [effect4Resolution],
  logLevel: "warning"
})
const child = spawn(process.execPath, [path.join(dir, path.basename(entries[0]).replace(/\.ts$/, ".mjs")), ...args], {
  stdio: "inherit"
})
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => {
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(code ?? (signal === null ? 1 : 128))
})
