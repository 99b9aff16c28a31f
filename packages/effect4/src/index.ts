/**
 * mcp-worker for Effect 4 applications.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as AgentHost from "./AgentHost.js"

/**
 * @since 0.1.0
 */
export * as McpClient from "./McpClient.js"

/**
 * @since 0.1.0
 */
export * as McpWorkerError from "./McpWorkerError.js"

/**
 * @since 0.1.0
 */
export * as McpWorkers from "./McpWorkers.js"

/**
 * @since 0.1.0
 */
export * as NodeMcpWorkers from "./NodeMcpWorkers.js"

/**
 * @since 0.1.0
 */
export * as Tasks from "./Tasks.js"

/**
 * @since 0.1.0
 */
export * as WorkerStatus from "./WorkerStatus.js"
