/**
 * The Node.js implementation of `McpWorkers`: each worker's connection lives in a dedicated owner thread.
 *
 * @since 0.1.0
 */
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Layer from "effect/Layer"
import * as Host from "./internal/host.js"

/**
 * The host registry. Build it once per process (normally in the main thread); it owns every owner thread,
 * and its finalizer closes every worker.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(McpWorkers.McpWorkers, Host.make())
