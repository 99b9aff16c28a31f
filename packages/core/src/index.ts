/**
 * @since 0.1.0
 */

/**
 * JSON plain data: the check, codec and types for configs and call arguments.
 *
 * @since 0.1.0
 */
export * as JsonValue from "./JsonValue.js"

/**
 * The typed failures of mcp-worker.
 *
 * @since 0.1.0
 */
export * as McpWorkerError from "./McpWorkerError.js"

/**
 * Hiding secrets in text that leaves the library.
 *
 * @since 0.1.0
 */
export * as Redact from "./Redact.js"

/**
 * Server configs: accepted shapes, normalized form and wire form.
 *
 * @since 0.1.0
 */
export * as ServerConfig from "./ServerConfig.js"

/**
 * Opaque worker and request ids.
 *
 * @since 0.1.0
 */
export * as WorkerId from "./WorkerId.js"

/**
 * The status of one worker.
 *
 * @since 0.1.0
 */
export * as WorkerStatus from "./WorkerStatus.js"

/**
 * @since 0.1.0
 */
export * as McpWorkers from "./McpWorkers.js"

/**
 * A caller's request checked once, the same way on every surface: params, budget, `saveTo`, `onTooLarge`.
 *
 * @since 0.1.0
 */
export * as Prepare from "./protocol/Prepare.js"

/**
 * Results written to a file instead of the answer: `saveTo`, and the `onTooLarge` spill.
 *
 * @since 0.1.0
 */
export * as ResultFile from "./ResultFile.js"

/**
 * @since 0.1.0
 */
export * as OwnerProtocol from "./protocol/OwnerProtocol.js"

/**
 * @since 0.1.0
 */
export * as Owner from "./protocol/Owner.js"

/**
 * Config documents: the readers of the files agent hosts keep their servers in.
 *
 * @since 0.1.0
 */
export * as McpConfig from "./agentHost/McpConfig.js"

/**
 * Every server of a config document opened, and closed, at once.
 *
 * @since 0.1.0
 */
export * as OpenAll from "./agentHost/OpenAll.js"

/**
 * TypeScript declarations of a server's tools, from its `tools/list`.
 *
 * @since 0.1.0
 */
export * as ToolDeclarations from "./agentHost/ToolDeclarations.js"

/**
 * A worker's tools as the methods of one object.
 *
 * @since 0.1.0
 */
export * as ToolBinding from "./agentHost/ToolBinding.js"

/**
 * Which of a server's tools a worker offers: the `tools` option of `open`.
 *
 * @since 0.1.0
 */
export * as ToolFilter from "./ToolFilter.js"

/**
 * The agent-host operations: a config document opened at once, tool declarations, tools as methods.
 *
 * @since 0.1.0
 */
export * as AgentHost from "./agentHost/AgentHost.js"

/**
 * Tasks: a tool call the server runs on after answering, reachable by its worker id and task id.
 *
 * @since 0.1.0
 */
export * as Tasks from "./Tasks.js"
