/**
 * A long tool call that outlives the run that started it. The host listens on a socket, opens the published
 * server-everything and hands out one grant of it. Run 1, a sandbox process by that grant, starts a research task
 * (`simulate-research-query`, four stages of about a second) and ends, printing only the task id. Run 2, another
 * sandbox process by the same grant, reads its status. Run 3, a fresh worker thread of the host's process, waits for
 * the result and collects it. Meanwhile the worker is free: the host pings it while the task runs.
 *
 * Run: npx tsx examples/tasks/main.ts
 */
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

const here = path.dirname(fileURLToPath(import.meta.url))
const everything = {
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}
// A directory of this user's only (0700): whoever may enter it may connect.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-tasks-"))
const socket = path.join(dir, "host.sock")
const run = path.join(dir, "run.mjs")

// Every run is the same small program (run.ts), bundled once: a process or a thread starts it in a moment.
const bundleRun = Effect.promise(() =>
  esbuild.build({
    entryPoints: [path.join(here, "run.ts")],
    outfile: run,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The root tsconfig maps `@mcp-worker/*` to the sources: nothing needs to be built first.
    tsconfig: path.join(here, "../../tsconfig.json"),
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);'
    },
    logLevel: "warning"
  })
)

// A sandbox process: the socket path, the grant and the step, as environment variables, and its one line of output.
const inSandbox = (step: string, grant: string, taskId?: string) =>
  Effect.async<string, Error>((resume) => {
    const env = { ...process.env, MCP_STEP: step, MCP_TARGET: grant, MCP_SOCKET: socket, MCP_TASK: taskId ?? "" }
    execFile(process.execPath, [run], { env }, (error, stdout) =>
      resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim()))
    )
  })

// A fresh worker thread of this process: it reaches the host's workers by id.
const inThread = (step: string, target: string, taskId: string) =>
  Effect.async<string, Error>((resume) => {
    let output = ""
    const thread = new Worker(run, { workerData: { step, target, taskId }, stdout: true })
    thread.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    thread.on("error", (error) => resume(Effect.fail(error)))
    thread.on("exit", () => resume(Effect.succeed(output.trim())))
  })

const program = Effect.gen(function* () {
  yield* bundleRun
  const workers = yield* McpWorkers
  const grants = yield* McpGrants.McpGrants
  const id = yield* workers.open(everything)
  const grant = yield* grants.grant(id, { ttl: "10 minutes" })
  const started = yield* inSandbox("start", grant)
  console.log("run 1, sandbox by grant, starts the task and ends:", started.replace(/"taskId":"[^"]+"/, '"taskId":"…"'))
  const { taskId } = JSON.parse(started) as { taskId: string }
  console.log("the host, while the task runs: ping", JSON.stringify(yield* workers.ping(id)))
  console.log("run 2, another sandbox by the grant, reads its status:", yield* inSandbox("status", grant, taskId))
  console.log("run 3, a fresh thread, collects the result:", yield* inThread("collect", id, taskId))
  const closed = yield* workers.close(id)
  console.log("closed:", JSON.stringify({ state: closed.state, activeProcesses: closed.cleanup?.activeProcesses }))
})

Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerListen({ path: socket })))).finally(() =>
  fs.rmSync(dir, { recursive: true, force: true })
)
