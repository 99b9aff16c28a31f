/**
 * @since 0.1.0
 */

/**
 * The typed failures of mcp-worker as plain classes.
 *
 * @since 0.1.0
 */
export * as McpWorkerError from "./McpWorkerError.js"
