/**
 * The `McpWorkers` service for Effect 4: open a stateful MCP connection in a dedicated owner thread, then use it
 * from anywhere in the process by its opaque id. The same operations, options and errors as `@mcp-worker/core`'s
 * `McpWorkers`; the layers are in `NodeMcpWorkers`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type { McpWorkerError, RequestError } from "./McpWorkerError.js"
import type * as AgentHost from "./AgentHost.js"
import type * as Content from "./internal/content.js"
import type * as Tasks from "./Tasks.js"
import type * as ConfigInput from "../lib/caller/ConfigInput.js"
import type * as Operations from "../lib/caller/Operations.js"
import type * as Options from "../lib/caller/Options.js"
import type * as Plane from "../lib/caller/Plane.js"
import type * as Surface from "../lib/caller/Surface.js"
import type * as ResultFile from "../lib/caller/ResultFile.js"
import type { WorkerStatus } from "./WorkerStatus.js"
import type { EffectRuntime } from "./internal/effectRuntime.js"

/**
 * A string, or a secret held in Effect's `Redacted` until the config crosses into the implementation (which holds
 * it in `Redacted` again from there until the transport needs it).
 *
 * @since 0.1.0
 * @category models
 */
export type Secret = string | Redacted.Redacted<string>

/**
 * A secret of an `auth` config: the value, or `{ env: NAME }` read from the calling thread's environment.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthSecret = ConfigInput.SecretInput<Secret>

/**
 * A stdio server as `open` accepts it (also as an `mcpServers` entry, `type: "stdio"`); editors' own keys are
 * accepted and ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioConfig extends ConfigInput.StdioInput<Secret> {
  readonly [editorKey: string]: unknown
}

/**
 * An HTTP server as `open` accepts it (`type: "http"` is Streamable HTTP, `type: "sse"` the older HTTP+SSE).
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpConfig extends ConfigInput.HttpInput<Secret> {
  readonly [editorKey: string]: unknown
}

/**
 * Every config shape `open` accepts: JSON plain data, secrets as strings or `Redacted`.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerConfig =
  StdioConfig | HttpConfig | { readonly mcpServers: Readonly<Record<string, StdioConfig | HttpConfig>> }

/**
 * One progress notification of a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress extends Plane.Progress {}

/**
 * The options every request takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions extends Operations.RequestOptions<Duration.Input> {}

/**
 * The options of a paginated list.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions extends Operations.ListOptions<Duration.Input> {}

/**
 * What becomes of a `callTool` result over `maxResultBytes`: `{ spill: directory }` writes it to a new file there and
 * answers a `SpilledResult`; `"fail"` is `ResultTooLarge`.
 *
 * @since 0.1.0
 * @category models
 */
export type TooLargePolicy = ResultFile.TooLargePolicy

/**
 * The options of `callTool`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolOptions extends Operations.CallToolOptions<Duration.Input> {}

/**
 * What `callTool` with `saveTo` answers.
 *
 * @since 0.1.0
 * @category models
 */
export type SavedResult = ResultFile.SavedResult

/**
 * What `callTool` answers for a result over `maxResultBytes` that was spilled (`onTooLarge`): the file's summary,
 * with a text block naming it in place of the result's content.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpilledResult extends SavedResult {
  readonly spilled: true
  readonly limit: number
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly [key: string]: unknown
}

/**
 * A raw MCP result, as the server sent it (unknown fields included).
 *
 * @since 0.1.0
 * @category models
 */
export interface RawResult {
  readonly _meta?: { readonly [key: string]: unknown } | undefined
  readonly [key: string]: unknown
}

/**
 * The raw `tools/call` result, `isError` included.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolResult extends RawResult {
  readonly content: ReadonlyArray<ContentBlock>
  /** What the tool's `outputSchema` describes; as the MCP SDK types it, to be checked before use. */
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
}

/**
 * A block of a tool's result, told apart by `type`: after `block.type === "text"`, `block.text` is a string. The
 * MCP SDK's `ContentBlock`, as `@mcp-worker/core` answers it (C98).
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlock =
  Content.TextContent | Content.ImageContent | Content.AudioContent | Content.ResourceLink | Content.EmbeddedResource

/**
 * The raw `tools/list` result.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListToolsResult extends RawResult {
  readonly tools: ReadonlyArray<{ readonly name: string; readonly [key: string]: unknown }>
  readonly nextCursor?: string | undefined
}

/**
 * Options of `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends Options.Open<Duration.Input> {}

/**
 * The `tools` option of `open`: glob patterns of the tool names a worker offers (`allow`, every tool when absent)
 * and withholds (`deny`, applied after `allow`). `*` matches any run of characters, `?` one.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFilter extends Options.ToolFilter {}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions extends Options.Close<Duration.Input> {}

/**
 * Options of `events`.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventsOptions extends Options.Events {}

/**
 * The kinds of server notification `events` carries.
 *
 * @since 0.1.0
 * @category models
 */
export type NotificationMethod = Plane.NotificationMethod

/**
 * One server notification, as the server sent it: `params` is untrusted data the library does not interpret.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerNotification = Plane.ServerNotification

type Request<Args extends ReadonlyArray<unknown>, Options, A> = (
  id: string,
  ...rest: [...Args, options?: Options]
) => Effect.Effect<A, RequestError>

/**
 * Every request of the operation table, each by worker id.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requests {
  readonly listTools: Request<[], ListOptions, ListToolsResult>
  readonly callTool: {
    (
      id: string,
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions & { readonly saveTo: string }
    ): Effect.Effect<SavedResult, RequestError>
    (
      id: string,
      name: string,
      args?: { readonly [key: string]: unknown },
      options?: CallToolOptions
    ): Effect.Effect<CallToolResult, RequestError>
  }
  readonly listResources: Request<[], ListOptions, RawResult>
  readonly listResourceTemplates: Request<[], ListOptions, RawResult>
  readonly readResource: Request<[uri: string], RequestOptions, RawResult>
  readonly subscribeResource: Request<[uri: string], RequestOptions, RawResult>
  readonly unsubscribeResource: Request<[uri: string], RequestOptions, RawResult>
  readonly listPrompts: Request<[], ListOptions, RawResult>
  readonly getPrompt: Request<[name: string, args?: Readonly<Record<string, string>>], RequestOptions, RawResult>
  readonly complete: Request<[params: { readonly [key: string]: unknown }], RequestOptions, RawResult>
  readonly ping: Request<[], RequestOptions, RawResult>
  readonly startTask: Request<
    [name: string, args?: { readonly [key: string]: unknown }],
    Tasks.StartTaskOptions,
    Tasks.CreateTaskResult
  >
  readonly getTask: Request<[taskId: string], RequestOptions, Tasks.TaskState>
  readonly taskResult: Request<[taskId: string], RequestOptions, CallToolResult>
  readonly cancelTask: Request<[taskId: string], RequestOptions, Tasks.TaskState>
  readonly listTasks: Request<[], ListOptions, Tasks.ListTasksResult>
}

/**
 * The types this face gives the surface table (`@mcp-worker/caller/Surface`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SurfaceTypes {
  readonly config: ServerConfig
  readonly workerId: string
  readonly status: WorkerStatus
  readonly notification: ServerNotification
  readonly openOptions: OpenOptions
  readonly closeOptions: CloseOptions
  readonly eventsOptions: EventsOptions
  readonly document: AgentHost.Document
  readonly openAllOptions: AgentHost.OpenAllOptions
  readonly describeOptions: AgentHost.DescribeOptions
  readonly requestOptions: RequestOptions
  readonly binding: AgentHost.Binding
  readonly error: McpWorkerError
}

/**
 * The life-cycle operations of the service: open, status, cancel, close, events.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lifecycle extends Surface.Methods<Surface.Lifecycle<SurfaceTypes>, EffectRuntime> {}

/**
 * Every operation, each by worker id, each with its typed failures: the life cycle, every request of the operation
 * table, and the agent-host operations over them (`openAll`, `closeAll`, `describe`, `tools`).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpWorkersService extends Lifecycle, Requests, AgentHost.AgentHost {}

/**
 * The service: stateful MCP connections in owner threads, used by id from anywhere in the process.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpWorkers extends Context.Service<McpWorkers, McpWorkersService>()("@mcp-worker/effect4/McpWorkers") {}
