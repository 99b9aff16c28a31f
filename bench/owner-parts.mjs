// What one owner thread's runtime is made of: each part of it bundled on its own (as scripts/bundle.mjs bundles the
// whole), loaded in fresh worker threads, one at a time. For each part: the time to compile and evaluate it with no
// code cache, the live heap it leaves after two full GCs, and the process RSS per thread while 8 such threads stay
// alive. The first row is an empty thread, the floor of any worker thread; the last is the whole owner runtime.
//
//   npm run bench:parts
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const out = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-parts-"))
const threads = 8

const parts = {
  "zod (v4, as the SDK imports it)": `import * as z from "zod/v4"; globalThis.__keep = z`,
  "SDK types (its zod schemas)": `import * as t from "@modelcontextprotocol/sdk/types.js"; globalThis.__keep = t`,
  "SDK Client (types + protocol)": `import { Client } from "@modelcontextprotocol/sdk/client/index.js"; globalThis.__keep = Client`,
  "effect/Effect": `import * as Effect from "effect/Effect"; globalThis.__keep = Effect`,
  "effect/Effect + effect/Schema": `import * as S from "effect/Schema"; import * as E from "effect/Effect"; globalThis.__keep = [S, E]`,
  "platform WorkerRunner (Node)": `import * as R from "@effect/platform/WorkerRunner"; import * as N from "@effect/platform-node/NodeWorkerRunner"; globalThis.__keep = [R, N]`
}

// The thread: compiles and runs one CommonJS file, then reports its cost and waits.
const threadCode = `
const { parentPort, workerData } = require("node:worker_threads")
const v8 = require("node:v8"), vm = require("node:vm"), fs = require("node:fs"), { createRequire } = require("node:module")
v8.setFlagsFromString("--expose-gc")
const collect = globalThis.gc ?? vm.runInNewContext("gc")
let ms = 0
if (workerData.file !== null) {
  const source = fs.readFileSync(workerData.file, "utf8")
  const t0 = performance.now()
  const script = new vm.Script("(function (exports, require, module) {" + source + "\\n})", { filename: workerData.file })
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(workerData.file), module)
  ms = performance.now() - t0
}
collect(); collect()
parentPort.postMessage({ ms, heap: v8.getHeapStatistics().used_heap_size })
setInterval(() => {}, 1 << 30)
`

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const mib = (bytes) => (bytes / 1048576).toFixed(1)

const measure = async (file) => {
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  const alive = []
  const reports = []
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(threadCode, { eval: true, workerData: { file } })
    reports.push(
      await new Promise((resolve, reject) => (worker.once("message", resolve), worker.once("error", reject)))
    )
    alive.push(worker)
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  const rss = (process.memoryUsage().rss - before) / threads
  await Promise.all(alive.map((worker) => worker.terminate()))
  return { ms: median(reports.map((r) => r.ms)), heap: median(reports.map((r) => r.heap)), rss }
}

const rows = [["empty worker thread", null]]
for (const [name, contents] of Object.entries(parts)) {
  const file = path.join(out, `${rows.length}.cjs`)
  await esbuild.build({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    outfile: file,
    logLevel: "error"
  })
  rows.push([name, file])
}
rows.push([
  "the owner runtime (packages/node/owner/owner-runtime.cjs)",
  path.join(root, "packages/node/owner/owner-runtime.cjs")
])

console.log(
  `${threads} threads per row, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}`
)
console.log("part".padEnd(60), "eval ms".padStart(8), "live heap MiB".padStart(14), "RSS MiB/thread".padStart(15))
let empty
for (const [name, file] of rows) {
  const r = await measure(file)
  empty ??= r
  const heap = file === null ? mib(r.heap) : `+${mib(r.heap - empty.heap)}`
  const rss = file === null ? mib(r.rss) : `+${mib(r.rss - empty.rss)}`
  console.log(name.padEnd(60), r.ms.toFixed(1).padStart(8), heap.padStart(14), rss.padStart(15))
}
fs.rmSync(out, { recursive: true, force: true })
