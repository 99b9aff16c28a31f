// What one owner thread's runtime is made of: each part of it bundled on its own (as scripts/bundle.mjs bundles the
// whole), loaded in fresh worker threads, one at a time. For each part: the time to compile and evaluate it with no
// code cache, the live heap it leaves after two full GCs, and the process RSS per thread while 8 such threads stay
// alive. The first row is an empty thread, the floor of any worker thread; then the parts, the whole owner runtime
// (loaded with the owner threads' heap limits), and last what it all comes to: a thread holding an SDK v2 client
// connected to the fixture (the floor of a worker) against a worker opened through the library (its owner thread and
// the host's record of it), both measured the same way, in the same run.
//
// Then 32 at once, as an agent host opens its servers at start-up: 32 threads started together, each loading its
// file with V8's code cache (as owner threads load the runtime), against 32 SDK clients connected directly in this
// thread. The thread that loads the SDK client and connects it itself is the least an owner thread can be (one
// thread, one SDK client, one server): its time over the direct one is the floor of the `fan-out 32` open phase.
//
//   npm run bench:parts
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { bundleHost } from "../scripts/bundle.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const out = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-parts-"))
const threads = 8

const parts = {
  "zod (v4, as the SDK imports it)": `import * as z from "zod/v4"; globalThis.__keep = z`,
  "SDK 1.x types (its zod schemas)": `import * as t from "@modelcontextprotocol/sdk/types.js"; globalThis.__keep = t`,
  "SDK 1.x Client (types + protocol)": `import { Client } from "@modelcontextprotocol/sdk/client/index.js"; globalThis.__keep = Client`,
  // What the owner runs on: the v2 client, with its own zod 4 (nested under it by npm).
  "SDK 2.x client (@modelcontextprotocol/client)": `import { Client } from "@modelcontextprotocol/client"; globalThis.__keep = Client`,
  "effect/Effect": `import * as Effect from "effect/Effect"; globalThis.__keep = Effect`,
  "effect/Effect + effect/Schema": `import * as S from "effect/Schema"; import * as E from "effect/Effect"; globalThis.__keep = [S, E]`,
  "platform WorkerRunner (Node)": `import * as R from "@effect/platform/WorkerRunner"; import * as N from "@effect/platform-node/NodeWorkerRunner"; globalThis.__keep = [R, N]`
}

// The thread: compiles and runs one CommonJS file (and its `main`, if it has one), then reports its cost and waits
// until it is told to close.
const threadCode = `
const { parentPort, workerData } = require("node:worker_threads")
const v8 = require("node:v8"), vm = require("node:vm"), fs = require("node:fs"), { createRequire } = require("node:module")
v8.setFlagsFromString("--expose-gc")
const collect = globalThis.gc ?? vm.runInNewContext("gc")
const run = async () => {
  let ms = 0
  const module = { exports: {} }
  if (workerData.file !== null) {
    const source = fs.readFileSync(workerData.file, "utf8")
    const t0 = performance.now()
    const script = new vm.Script("(function (exports, require, module) {" + source + "\\n})", { filename: workerData.file })
    script.runInThisContext()(module.exports, createRequire(workerData.file), module)
    ms = performance.now() - t0
  }
  if (module.exports.main !== undefined) await module.exports.main(workerData.server)
  collect(); collect()
  parentPort.once("message", () => Promise.resolve(module.exports.close?.()).then(() => process.exit(0)))
  parentPort.postMessage({ ms, heap: v8.getHeapStatistics().used_heap_size })
}
run().catch((error) => parentPort.postMessage({ error: String(error) }))
`

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const mib = (bytes) => (bytes / 1048576).toFixed(1)

const fixture = path.join(root, "test/fixtures/dist/stateful.mjs")
const server = { command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] }
const settle = async () => {
  await new Promise((resolve) => setTimeout(resolve, 300))
  globalThis.gc?.()
}

const measure = async (file, resourceLimits) => {
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  const alive = []
  const reports = []
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(threadCode, { eval: true, workerData: { file, server }, resourceLimits })
    const report = await new Promise(
      (resolve, reject) => (worker.once("message", resolve), worker.once("error", reject))
    )
    if (report.error !== undefined) throw new Error(report.error)
    reports.push(report)
    alive.push(worker)
  }
  await settle()
  const rss = (process.memoryUsage().rss - before) / threads
  await Promise.all(
    alive.map((worker) => new Promise((resolve) => (worker.once("exit", resolve), worker.postMessage("close"))))
  )
  return { ms: median(reports.map((r) => r.ms)), heap: median(reports.map((r) => r.heap)), rss }
}

// The library's host, bundled from this checkout: its owner threads load this checkout's owner build.
const hostFile = path.join(out, "host.mjs")
await bundleHost({
  stdin: {
    contents: `
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
const use = (f) => runtime.runPromise(Effect.flatMap(McpWorkers, f))
export const open = (config, n) =>
  use((workers) =>
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      (i) => Effect.tap(workers.open(config), (id) => workers.callTool(id, "echo", { token: "parts" + i })),
      { concurrency: "unbounded" }
    )
  )
export const close = (ids) => use((workers) => Effect.forEach(ids, (id) => workers.close(id), { discard: true }))
export const dispose = () => runtime.dispose()
import * as OwnerThread from "@mcp-worker/node/internal/host/ownerThread"
export const ownerResourceLimits = OwnerThread.ownerResourceLimits
`,
    resolveDir: root,
    loader: "ts"
  },
  outfile: hostFile
})
const host = await import(hostFile)

// RSS per open worker: `threads` workers opened at once (one echo each), over the host before them.
const measureWorkers = async () => {
  await host.close(await host.open(server, 1))
  await settle()
  const before = process.memoryUsage().rss
  const ids = await host.open(server, threads)
  await settle()
  const rss = (process.memoryUsage().rss - before) / threads
  await host.close(ids)
  return rss
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
  path.join(root, "packages/node/owner/owner-runtime.cjs"),
  host.ownerResourceLimits
])
const floorFile = path.join(out, "floor.cjs")
await esbuild.build({
  stdin: {
    contents: `
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
let client
export const main = async (server) => {
  client = new Client({ name: "owner-parts", version: "0.1.0" }, { capabilities: {} })
  await client.connect(new StdioClientTransport({ ...server, stderr: "ignore" }))
  await client.callTool({ name: "echo", arguments: { token: "floor" } })
}
export const close = () => client.close()
`,
    resolveDir: root,
    loader: "ts"
  },
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  outfile: floorFile,
  logLevel: "error"
})
const floorRow = "SDK 2.x client connected to the fixture, 1 call (the floor)"
rows.push([floorRow, floorFile])

console.log(
  `${threads} threads per row, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}`
)
console.log("part".padEnd(60), "eval ms".padStart(8), "live heap MiB".padStart(14), "RSS MiB/thread".padStart(15))
let empty
let floor
for (const [name, file, limits] of rows) {
  const r = await measure(file, limits)
  empty ??= r
  if (name === floorRow) floor = r
  const heap = file === null ? mib(r.heap) : `+${mib(r.heap - empty.heap)}`
  const rss = file === null ? mib(r.rss) : `+${mib(r.rss - empty.rss)}`
  console.log(name.padEnd(60), r.ms.toFixed(1).padStart(8), heap.padStart(14), rss.padStart(15))
}
const worker = await measureWorkers()
console.log(
  "an open worker (its owner thread and the host's record of it)".padEnd(60),
  "".padStart(8),
  "".padStart(14),
  `+${mib(worker - empty.rss)}`.padStart(15)
)
console.log()
console.log(
  `RSS per thread: the floor (empty thread + connected client) ${mib(floor.rss)} MiB, an open worker ${mib(worker)} MiB:` +
    ` ${mib(worker - floor.rss)} MiB over the floor (target ≤ 4)`
)

// 32 at once

const fanOut = 32
const rounds = 3

// Loads one CommonJS file with its code cache (made by the first thread that loads it without one), then runs its
// `main` (if any) and reports.
const fanOutCode = `
const { parentPort, workerData } = require("node:worker_threads")
const vm = require("node:vm"), fs = require("node:fs"), { createRequire } = require("node:module")
const run = async () => {
  if (workerData.file === null) return
  const source = fs.readFileSync(workerData.file, "utf8")
  let cachedData
  try { cachedData = fs.readFileSync(workerData.file + ".cache") } catch {}
  const script = new vm.Script("(function (exports, require, module) {" + source + "\\n})", { filename: workerData.file, cachedData })
  if (cachedData !== undefined && script.cachedDataRejected) throw new Error("the code cache was rejected")
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(workerData.file), module)
  if (module.exports.main !== undefined) await module.exports.main(workerData.server)
  if (cachedData === undefined) fs.writeFileSync(workerData.file + ".cache", script.createCachedData())
}
run().then(() => parentPort.postMessage("ready"), (error) => parentPort.postMessage(String(error)))
`

const sdkEntry = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
let client
export const main = async (server) => {
  client = new Client({ name: "owner-parts", version: "0.1.0" }, { capabilities: {} })
  await client.connect(new StdioClientTransport({ ...server, stderr: "ignore" }))
  require("node:worker_threads").parentPort.once("message", () => client.close().then(() => process.exit(0)))
}
`
const sdkFile = path.join(out, "sdk-connect.cjs")
await esbuild.build({
  stdin: { contents: sdkEntry, resolveDir: root, loader: "ts" },
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  outfile: sdkFile,
  logLevel: "error"
})
const runtimeFile = path.join(out, "owner-runtime.cjs")
fs.copyFileSync(path.join(root, "packages/node/owner/owner-runtime.cjs"), runtimeFile)

const startThreads = async (file) => {
  const workers = []
  const ready = []
  for (let i = 0; i < fanOut; i++) {
    const worker = new Worker(fanOutCode, { eval: true, workerData: { file, server } })
    workers.push(worker)
    ready.push(
      new Promise((resolve, reject) => {
        worker.once("message", (m) => (m === "ready" ? resolve() : reject(new Error(m))))
        worker.once("error", reject)
      })
    )
  }
  await Promise.all(ready)
  return async () => {
    // The SDK threads close their client and exit when told; the others are terminated.
    await Promise.all(
      workers.map((worker) =>
        file === sdkFile
          ? new Promise((resolve) => (worker.once("exit", resolve), worker.postMessage("close")))
          : worker.terminate()
      )
    )
  }
}

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
const connectDirect = async () => {
  const clients = await Promise.all(
    Array.from({ length: fanOut }, async () => {
      const client = new Client({ name: "owner-parts", version: "0.1.0" }, { capabilities: {} })
      await client.connect(new StdioClientTransport({ ...server, stderr: "ignore" }))
      return client
    })
  )
  return () => Promise.all(clients.map((client) => client.close()))
}

const fanOutRows = [
  ["32 SDK clients connected directly in one thread", () => connectDirect()],
  ["32 empty worker threads", () => startThreads(null)],
  ["32 threads, each loading the SDK client and connecting it", () => startThreads(sdkFile)],
  ["32 threads, each loading the owner runtime (no server)", () => startThreads(runtimeFile)]
]
// Warm-up: makes the code caches and starts the fixture once.
await (
  await startThreads(sdkFile)
)()
await (
  await startThreads(runtimeFile)
)()
await (
  await connectDirect()
)()
const times = fanOutRows.map(() => [])
for (let round = 0; round < rounds; round++) {
  // Rotated, so that machine drift does not favour one row.
  for (let k = 0; k < fanOutRows.length; k++) {
    const i = (k + round) % fanOutRows.length
    const t0 = performance.now()
    const close = await fanOutRows[i][1]()
    times[i].push(performance.now() - t0)
    await close()
  }
}
const direct = median(times[0])
console.log()
console.log(`${fanOut} at once, ${rounds} rotated rounds, median wall time until all are ready`)
console.log("what starts".padEnd(60), "ms".padStart(8), "÷ direct".padStart(10))
fanOutRows.forEach(([name], i) => {
  const ms = median(times[i])
  console.log(name.padEnd(60), ms.toFixed(0).padStart(8), `${(ms / direct).toFixed(2)}×`.padStart(10))
})
await host.dispose()
fs.rmSync(out, { recursive: true, force: true })
