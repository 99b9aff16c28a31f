/**
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as NodeMcpWorkers from "./NodeMcpWorkers.js"

/**
 * @since 0.1.0
 */
export * as ProcessJob from "./ProcessJob.js"
