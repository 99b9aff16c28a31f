/**
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as HostView from "./HostView.js"

/**
 * @since 0.1.0
 */
export * as McpClient from "./McpClient.js"

/**
 * @since 0.1.0
 */
export * as McpGrants from "./McpGrants.js"

/**
 * @since 0.1.0
 */
export * as McpServe from "./McpServe.js"

/**
 * @since 0.1.0
 */
export * as NodeMcpWorkers from "./NodeMcpWorkers.js"

/**
 * @since 0.1.0
 */
export * as ProcessJob from "./ProcessJob.js"

/**
 * @since 0.1.0
 */
export * as PromiseClient from "./PromiseClient.js"

/**
 * @since 0.1.0
 */
export * as WorkerMetrics from "./WorkerMetrics.js"

export {
  /**
   * The Promise facade of `McpWorkers`, for code that is not written with Effect.
   *
   * @since 0.1.0
   * @category constructors
   */
  makePromiseClient
} from "./PromiseClient.js"
