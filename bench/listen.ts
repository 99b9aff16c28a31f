// `BENCH_ROWS=listen npm run bench`: `callTool` (tiny echo) from a sandbox process over a listener's socket, against
// the SDK `Client` used directly in that same process (target ≤ 1.6×), and the socket's cost per call over a remote
// thread's (the same call through makePromiseClient() in a worker_thread of the host). With `BENCH_PROFILE_DIR`, the
// host thread is profiled over the sandbox's run (host.cpuprofile) and the sandbox over each block (socket-<b>,
// direct-<b>): what a socket call costs each process beyond a direct one.
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
import * as McpGrants from "../packages/node/src/McpGrants.js"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import * as Profiler from "./profiler.js"
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

/**
 * The CPU time of this process's main thread (the host's), in ms, from `/proc` (clock ticks): unlike the event loop's
 * active time, it does not count the time the thread waits for a core on a busy machine.
 */
const mainThreadCpuMs = (): number => {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

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
  // The host thread's profile over the sandbox's run (`host`).
  const { out, hostActiveUs, hostCpuUs } = await Profiler.make(process.env.BENCH_PROFILE_DIR).around(
    "host",
    async () => {
      const hostBefore = performance.eventLoopUtilization()
      const cpuBefore = mainThreadCpuMs()
      // Asynchronously: the host's own event loop serves the sandbox meanwhile.
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          [entry, JSON.stringify({ socket, id: grant, fixture, blocks, perBlock })],
          (error, stdout) => (error ? reject(error) : resolve(stdout))
        )
      )
      // The host's busy time over the sandbox's run, per socket call: the direct blocks cost the host nothing.
      const hostActiveUs = (performance.eventLoopUtilization(hostBefore).active * 1000) / (200 + blocks * perBlock)
      const hostCpuUs = ((mainThreadCpuMs() - cpuBefore) * 1000) / (200 + blocks * perBlock)
      return { out, hostActiveUs, hostCpuUs }
    }
  )
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
      `| host thread busy per socket call (event loop active) | | ${us(hostActiveUs)} | |`,
      `| host thread CPU per socket call | | ${us(hostCpuUs)} | |`,
      ""
    ].join("\n") + "\n"
  )
  process.stdout.write(JSON.stringify({ sandbox, thread, hostActiveUs, hostCpuUs, blocks, perBlock }) + "\n")
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
