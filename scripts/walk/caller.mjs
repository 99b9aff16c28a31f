// The caller of `npm run walk`, bundled with its sources mapped: in a thread of the host (the thread plane) or in a
// process of its own (the socket, by grant), through the Effect face (`NodeMcpWorkers.layerRemote` / `layerConnect`)
// or the Effect-free one (`@mcp-worker/caller`'s client). It runs the calls it is told to, `calls` at a time; in a
// process it also takes its own coverage (the host takes its threads').
import { makeClient } from "@mcp-worker/caller/Client"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as inspector from "node:inspector/promises"
import * as readline from "node:readline"
import { isMainThread, parentPort, workerData } from "node:worker_threads"
import * as Coverage from "./coverage.mjs"

const { variant, socket, id, calls } = isMainThread ? JSON.parse(process.argv[2]) : workerData
const args = { token: "x" }

const effectCaller = async () => {
  const layer = socket === undefined ? NodeMcpWorkers.layerRemote : NodeMcpWorkers.layerConnect({ path: socket })
  const runtime = ManagedRuntime.make(layer)
  const workers = await runtime.runPromise(McpWorkers)
  const run = (n) =>
    Effect.gen(function* () {
      for (let i = 0; i < n; i++) yield* workers.callTool(id, "echo", args)
    })
  return {
    run: (n) => runtime.runPromise(run(n)),
    dispose: () => runtime.dispose()
  }
}

const promiseCaller = () => {
  const mcp = makeClient(socket === undefined ? undefined : { connect: socket })
  return {
    run: async (n) => {
      for (let i = 0; i < n; i++) await mcp.callTool(id, "echo", args)
    },
    dispose: () => mcp.dispose()
  }
}

const caller = variant === "effect" ? await effectCaller() : promiseCaller()

// In a process of its own, the caller takes its own coverage: a snapshot at each phase's end (`reset`, `window`,
// `idle`), the functions that ran on every call after the last.
const selfCoverage = async () => {
  const session = new inspector.Session()
  session.connect()
  const post = (method, params) => session.post(method, params)
  await Coverage.start(post)
  let window
  return async (phase) => {
    const taken = await Coverage.snapshot(post)
    if (phase === "window") window = taken
    return phase === "idle" ? Coverage.perCall(post, window, taken, calls) : []
  }
}

// One command, one answer: `{ run: n }` → `{ ran }`, `{ snapshot: phase }` → `{ found }`, `{ exit: true }`.
const serve = (take, send, onExit) => async (command) => {
  try {
    if (command.run !== undefined) send({ ran: (await caller.run(command.run), command.run) })
    else if (command.snapshot !== undefined) send({ found: await take(command.snapshot) })
    else if (command.exit) {
      await caller.dispose()
      send({ exited: true })
      onExit()
    }
  } catch (error) {
    send({ error: String(error?.message ?? error), tag: error?._tag })
  }
}

if (isMainThread) {
  const take = await selfCoverage()
  const lines = readline.createInterface({ input: process.stdin })
  const handle = serve(
    take,
    (answer) => process.stdout.write(JSON.stringify(answer) + "\n"),
    () => (lines.close(), process.stdin.destroy())
  )
  lines.on("line", (line) => void handle(JSON.parse(line)))
  process.stdout.write(JSON.stringify({ ready: true }) + "\n")
} else {
  const handle = serve(
    undefined,
    (answer) => parentPort.postMessage(answer),
    () => parentPort.close()
  )
  parentPort.on("message", (command) => void handle(command))
  parentPort.postMessage({ ready: true })
}
