/**
 * @since 0.1.0
 */

/**
 * JSON plain data: the check every call's arguments pass before anything is sent.
 *
 * @since 0.1.0
 */
export * as JsonValue from "./JsonValue.js"

/**
 * The typed failures of mcp-worker as plain classes.
 *
 * @since 0.1.0
 */
export * as McpWorkerError from "./McpWorkerError.js"

/**
 * The table of request operations, and the checks of a caller's arguments, budget and ids.
 *
 * @since 0.1.0
 */
export * as Operations from "./Operations.js"

/**
 * What a plane (a way to reach a host) implements.
 *
 * @since 0.1.0
 */
export * as Plane from "./Plane.js"

/**
 * Results written to a file instead of the answer: `saveTo`, and the `onTooLarge` spill.
 *
 * @since 0.1.0
 */
export * as ResultFile from "./ResultFile.js"
