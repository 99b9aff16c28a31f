/**
 * What an agent host asks of `McpWorkers` beyond one server, for Effect 4: a whole config document opened and closed
 * at once (`openAll`, `closeAll`), the declarations of a worker's tools (`describe`), and its tools as methods
 * (`tools`). The same operations, options and per-entry answers as `@mcp-worker/core`'s `AgentHost` and `OpenAll`.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { InvalidInput, RequestError } from "./McpWorkerError.js"
import type * as ConfigInput from "../lib/caller/ConfigInput.js"
import type * as CallerOptions from "../lib/caller/Options.js"
import type * as Surface from "../lib/caller/Surface.js"
import type * as McpWorkers from "./McpWorkers.js"
import type { EffectRuntime } from "./internal/effectRuntime.js"
import type { WorkerStatus } from "./WorkerStatus.js"

/**
 * A VS Code input (`inputs` of `mcp.json`): a value the editor would ask the user for, given here by the caller
 * (`OpenAllOptions.inputs`), else its `default`.
 *
 * @since 0.1.0
 * @category models
 */
export type InputDeclaration = ConfigInput.InputDeclaration

/**
 * Servers by name, each a config as `open` accepts it whose strings may hold references (`${env:NAME}`,
 * `${env:NAME:-default}`, `${input:ID}`, `${workspaceFolder}`, `${userHome}`, `${pathSeparator}`, `${$}`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Document extends ConfigInput.Document<McpWorkers.StdioConfig | McpWorkers.HttpConfig> {}

/**
 * Options of `openAll`: what references are filled in from, and the options of each `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAllOptions
  extends CallerOptions.References<McpWorkers.Secret>, CallerOptions.OpenAll<McpWorkers.OpenOptions> {}

/**
 * What became of one entry of `openAll`: its worker id, or why it did not open.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenResult<E> = Surface.Opened<string> | Surface.NotOpened<E | InvalidInput>

/**
 * What `openAll` answers: every entry of the document, by name.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenAllResult<E> = Readonly<Record<string, OpenResult<E>>>

/**
 * What became of one worker in `closeAll`: its final status, or why its close failed (the id is kept).
 *
 * @since 0.1.0
 * @category models
 */
export type CloseResult<E> = Surface.Closed<WorkerStatus> | Surface.NotClosed<string, E>

/**
 * Options of `describe`: those of the rendering, and of each `listTools` page.
 *
 * @since 0.1.0
 * @category models
 */
export interface DescribeOptions extends McpWorkers.RequestOptions, CallerOptions.Rendering {}

/**
 * One tool as an Effect method: `callTool` with the tool's real name, the same results, options and errors.
 *
 * @since 0.1.0
 * @category models
 */
export interface EffectMethod {
  (
    args: { readonly [key: string]: unknown } | undefined,
    options: McpWorkers.CallToolOptions & { readonly saveTo: string }
  ): Effect.Effect<McpWorkers.SavedResult, RequestError>
  (
    args?: { readonly [key: string]: unknown },
    options?: McpWorkers.CallToolOptions
  ): Effect.Effect<McpWorkers.CallToolResult, RequestError>
}

/**
 * The tools of a worker, by method name (the names `describe` declares).
 *
 * @since 0.1.0
 * @category models
 */
export type Binding = { readonly [method: string]: EffectMethod }

/**
 * The agent-host operations of `McpWorkers`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentHost extends Surface.Methods<Surface.AgentHost<McpWorkers.SurfaceTypes>, EffectRuntime> {}
