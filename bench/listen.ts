// `BENCH_ROWS=listen npm run bench`: `callTool` (tiny echo) from a sandbox process over a listener's socket, against
// the SDK `Client` used directly in that same process (target ≤ 1.6×), and the socket's cost per call over a remote
// thread's (the same call through makePromiseClient() in a worker_thread of the host).
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import * as inspector from "node:inspector/promises"
import * as McpGrants from "../packages/node/src/McpGrants.js"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import { median } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const fixture = path.resolve(here, "../test/fixtures/dist/stateful.mjs")
const blocks = 8
const perBlock = 300

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-listen-"))
fs.chmodSync(dir, 0o700)
const entry = path.join(dir, "listenEntry.mjs")
await esbuild.build({
  entryPoints: [path.join(here, "listenEntry.ts")],
  outfile: entry,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  tsconfig: path.join(here, "../tsconfig.json"),
  banner: {
    js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
  },
  logLevel: "warning"
})

const socket = path.join(dir, "host.sock")
const runtime = ManagedRuntime.make(
  Layer.merge(NodeMcpWorkers.layerListen({ path: socket }), Logger.minimumLogLevel(LogLevel.Warning))
)
try {
  const { id, grant } = await runtime.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] })
      const grant = yield* (yield* McpGrants.McpGrants).grant(id)
      return { id, grant }
    })
  )
  const profDir = process.env.BENCH_PROFILE_DIR
  const session = profDir === undefined ? undefined : new inspector.Session()
  if (session !== undefined) {
    session.connect()
    await session.post("Profiler.enable")
    await session.post("Profiler.setSamplingInterval", { interval: 100 })
    await session.post("Profiler.start")
  }
  // Asynchronously: the host's own event loop serves the sandbox meanwhile.
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [
        ...(profDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-interval", "100", "--cpu-prof-dir", profDir]),
        entry,
        JSON.stringify({ socket, id: grant, fixture, blocks, perBlock })
      ],
      (error, stdout) => (error ? reject(error) : resolve(stdout))
    )
  )
  if (session !== undefined) {
    const { profile } = await session.post("Profiler.stop")
    fs.writeFileSync(path.join(profDir!, "host.cpuprofile"), JSON.stringify(profile))
  }
  const sandbox = JSON.parse(out) as { socket: Array<number>; direct: Array<number> }
  const thread = await new Promise<Array<number>>((resolve, reject) => {
    const worker = new Worker(entry, { workerData: { id, fixture, blocks, perBlock } })
    worker.once("message", (message: { thread: Array<number> }) => resolve(message.thread))
    worker.once("error", reject)
  })
  const s = median(sandbox.socket)
  const d = median(sandbox.direct)
  const t = median(thread)
  const us = (x: number) => `${x.toFixed(1)} µs`
  process.stdout.write(
    [
      `| measure | target | median µs/call | ratio |`,
      `|---|---|---|---|`,
      `| callTool echo, sandbox process over the socket | ≤ 1.6× direct | ${us(s)} | ${(s / d).toFixed(2)}× |`,
      `| same process, the SDK Client used directly | | ${us(d)} | 1.00× |`,
      `| callTool echo, remote worker_thread (makePromiseClient()) | | ${us(t)} | |`,
      `| the socket's cost per call over a remote thread's | | ${us(s - t)} | ${(s / t).toFixed(2)}× |`,
      ""
    ].join("\n") + "\n"
  )
  process.stdout.write(JSON.stringify({ sandbox, thread, blocks, perBlock }) + "\n")
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
