/**
 * The Effect 4 example's remote thread: it knows nothing but the worker id, and reaches the host's worker through
 * `NodeMcpWorkers.layerRemote`.
 */
import { McpWorkers } from "@mcp-worker/effect4/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/effect4/NodeMcpWorkers"
import * as Effect from "effect/Effect"
import { parentPort, workerData } from "node:worker_threads"

const { id } = workerData as { readonly id: string }

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const first = yield* workers.callTool(id, "increment")
  const second = yield* workers.callTool(id, "increment")
  // A budget shorter than the tool: the request is cancelled at the server, and its outcome is unknown.
  const timedOut = yield* workers.callTool(id, "slow", { ms: 5_000 }, { timeout: "200 millis" }).pipe(
    Effect.as("answered"),
    Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed(`DeliveryUnknown (${error.reason})`))
  )
  // `structuredContent` is `unknown` until checked, as the MCP SDK types it; this server's is `{ count }`.
  const count = (result: { readonly structuredContent?: unknown }) =>
    (result.structuredContent as { count: number }).count
  return { counts: [count(first), count(second)], timedOut }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerRemote)))
parentPort!.postMessage(result)
