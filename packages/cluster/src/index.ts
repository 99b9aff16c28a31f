/**
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ClusterWorkerId from "./ClusterWorkerId.js"

/**
 * @since 0.1.0
 */
export * as McpCluster from "./McpCluster.js"
