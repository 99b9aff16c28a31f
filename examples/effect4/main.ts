/**
 * An Effect 4 program (effect 4.1) with mcp-worker: open a worker in an owner thread, use it from a remote
 * worker_thread by its id, catch `WorkerBusy` and `DeliveryUnknown` by tag, stream the server's notifications, and
 * close with the server's process tree confirmed gone.
 *
 * Run: npm run example:effect4 (Node ≥ 22.19)
 */
import { McpWorkers } from "@mcp-worker/effect4/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/effect4/NodeMcpWorkers"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

// This file runs bundled (packages/effect4/scripts/run.mjs), next to its bundled server and remote thread.
const server = { command: process.execPath, args: [fileURLToPath(new URL("./server.mjs", import.meta.url))] }

// A fresh thread that gets nothing but the id, as an agent's `execute_code` run would.
const inRemoteThread = (id: string) =>
  Effect.callback<unknown, Error>((resume) => {
    const thread = new Worker(new URL("./remote.mjs", import.meta.url), { workerData: { id } })
    thread.once("message", (result) => resume(Effect.succeed(result)))
    thread.once("error", (error) => resume(Effect.fail(error)))
    return Effect.promise(() => thread.terminate())
  })

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const id = yield* workers.open(server)
  yield* Console.log("opened", id)

  // The server's notifications, as a Stream, from now on.
  const events = yield* workers.events(id).pipe(
    Stream.take(2),
    Stream.runForEach((event) => Console.log("event:", event.method)),
    Effect.forkChild
  )

  yield* Console.log("remote thread:", yield* inRemoteThread(id))

  // One request at a time: a second one is refused at once and was not sent.
  const slow = yield* Effect.forkChild(workers.callTool(id, "slow", { ms: 300 }))
  yield* Effect.sleep("50 millis")
  yield* workers.callTool(id, "increment").pipe(
    Effect.flatMap(() => Console.log("increment was sent")),
    Effect.catchTag("WorkerBusy", (error) => Console.log(`WorkerBusy: ${error.requestId} in flight, ${error.delivery}`))
  )
  yield* Fiber.join(slow)

  yield* workers.callTool(id, "announce")
  yield* Fiber.join(events)

  const closed = yield* workers.close(id)
  yield* Console.log("closed; processes left:", closed.cleanup?.activeProcesses)
})

await Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layer())))
