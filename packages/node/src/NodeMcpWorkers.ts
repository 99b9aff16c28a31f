/**
 * The Node.js implementation of `McpWorkers`: each worker's connection lives in a dedicated owner thread, and any
 * thread of the process reaches it by id.
 *
 * @since 0.1.0
 */
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Host from "./internal/host.js"
import * as HostServer from "./internal/hostServer.js"
import * as Remote from "./internal/remote.js"

/**
 * The host registry. Build it once per process (normally in the main thread); it owns every owner thread, serves
 * the remote threads of the process, and its finalizer closes every worker.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(
  McpWorkers.McpWorkers,
  Effect.gen(function* () {
    // The server's channels are acquired before the registry, so they are released after it has closed every
    // worker: remote calls in flight are answered, then `Gone` is announced.
    const server = yield* HostServer.make
    const registry = yield* Host.make()
    yield* server.serve(registry)
    const { callTool, cancel, close, listTools, open, status } = registry
    return McpWorkers.McpWorkers.of({ open, listTools, callTool, status, cancel, close })
  })
)

/**
 * `McpWorkers` for any other thread (a `worker_thread`, an agent's `execute_code` run) of a process that runs
 * `layer` in some thread: the same workers, by the same ids. Only the id and plain data cross between threads.
 * With no host running, every operation fails within 1 s with `HostUnavailable`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRemote: Layer.Layer<McpWorkers.McpWorkers> = Remote.layer
