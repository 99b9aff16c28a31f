/**
 * @since 0.1.0
 */

/**
 * A worker's tools as methods: the binding a run is handed.
 *
 * @since 0.1.0
 */
export * as Binding from "./Binding.js"

/**
 * The config shapes `open` accepts, each face giving its own secret type.
 *
 * @since 0.1.0
 */
export * as ConfigInput from "./ConfigInput.js"

/**
 * The Promise client over a plane: the thread plane of this process's host, or a host's socket.
 *
 * @since 0.1.0
 */
export * as Client from "./Client.js"

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
 * The options of a host registry, a scoped client and `openAll`, each face giving its own runtime's types.
 *
 * @since 0.1.0
 */
export * as Options from "./Options.js"

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

/**
 * The life cycle and the agent-host operations as plain signatures, which each face maps to its runtime.
 *
 * @since 0.1.0
 */
export * as Surface from "./Surface.js"

/**
 * The thread plane's caller for an Effect face (`NodeMcpWorkers.layerRemote`).
 *
 * @since 0.1.0
 */
export * as ThreadCaller from "./ThreadCaller.js"

export {
  /**
   * The Promise client: `makeClient()` in a thread of the host's process, `makeClient({ connect })` anywhere on the
   * machine, by grant.
   *
   * @since 0.1.0
   * @category constructors
   */
  makeClient
} from "./Client.js"
