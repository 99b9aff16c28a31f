/**
 * What a plane implements: the way a caller reaches a host (the thread plane over `BroadcastChannel`, the socket
 * plane over a listener's socket). One `request` carries every operation of the table (`Operations`); the life-cycle
 * operations sit beside it. Every failure is an error of `McpWorkerError`.
 *
 * @since 0.1.0
 */
// `AsyncDisposable` is in the declarations: they name the lib that has it, for a program whose own lib does not.
/// <reference lib="esnext.disposable" preserve="true" />
import type { CleanupSummary } from "./McpWorkerError.js"
import type * as Options from "./Options.js"
import type * as Protocol from "./internal/thread/protocol.js"
import * as internal from "./internal/iterator.js"

/**
 * One progress notification of a request, as the server counts it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * One request as a plane sends it, already checked (`Operations.prepareFor`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  /** A worker id, or a grant on the socket plane. */
  readonly workerId: string
  /** An MCP method of the operation table. */
  readonly method: string
  /**
   * The request's name in the operation table (`Operations.requests`), where its method alone does not tell it:
   * `startTask` and `callTool` are both `tools/call`. Without it, the method's one request (`callTool` for `tools/call`).
   */
  readonly operation?: string | undefined
  /** The request's params as JSON text. */
  readonly params: string
  /** The caller's budget; `undefined`: the worker's default. */
  readonly budgetMs: number | undefined
  /** The caller's idle budget (C121); `undefined`: none. */
  readonly idleMs?: number | undefined
  readonly saveTo?: string | undefined
  readonly spill?: string | false | undefined
  readonly onProgress?: ((progress: Progress) => void) | undefined
  readonly signal?: AbortSignal | undefined
  /** The caller's span: its ids, and the W3C `tracestate` and `baggage` its trace carries (C84). */
  readonly trace?:
    readonly [traceId: string, spanId: string, sampled: boolean, tracestate?: string, baggage?: string] | undefined
}

/**
 * A state of a worker.
 *
 * @since 0.1.0
 * @category models
 */
export type WorkerState = "opening" | "ready" | "failed" | "closed"

/**
 * The status of one worker, safe to print (`@mcp-worker/core/WorkerStatus`'s type, which a test proves equal).
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerStatus {
  readonly workerId: string
  readonly state: WorkerState
  readonly busy: boolean
  readonly requestId: string | null
  readonly pid: number | null
  readonly threadId: number | null
  readonly ownerPid: number | null
  readonly era: "legacy" | "modern" | null
  readonly protocolVersion: string | null
  readonly server: { readonly name: string; readonly version: string } | null
  readonly lastFailure: {
    readonly kind: "transport" | "protocol" | "thread" | "closing" | "session_expired" | "unauthorized"
    readonly message: string
    readonly at: string
  } | null
  readonly cleanup: CleanupSummary | null
  readonly notifications: {
    readonly received: number
    readonly dropped: number
    readonly listChanged: {
      readonly tools: string | null
      readonly resources: string | null
      readonly prompts: string | null
    }
  }
  readonly runner?: { readonly address: string; readonly group: string } | undefined
}

/**
 * The methods of the notifications a worker's `events` gives.
 *
 * @since 0.1.0
 * @category constants
 */
export const notificationMethods = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/prompts/list_changed",
  "notifications/message"
] as const

/**
 * The methods of the notifications a worker's `events` gives.
 *
 * @since 0.1.0
 * @category models
 */
export type NotificationMethod = (typeof notificationMethods)[number]

/**
 * One server notification, as the server sent it: `params` is untrusted data.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerNotification {
  readonly method: NotificationMethod
  readonly params: { readonly [key: string]: unknown }
}

/**
 * The options of `open`, as a caller gives them (checked by the host).
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends Options.Open<unknown> {}

/**
 * An `open` checked by the surface that has the config checks (they need `@mcp-worker/core`): the config in its wire
 * form with the options the host reads, and the budget, whose deadline counts from when it is sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface PreparedOpen {
  readonly open: Omit<Protocol.RemoteOpen, "_tag" | "deadline">
  readonly budgetMs: number | undefined
}

/**
 * Checks an `open`'s config and options where it is called (C18), rejecting with `InvalidInput`.
 *
 * @since 0.1.0
 * @category models
 */
export type PrepareOpen = (config: unknown, options: OpenOptions) => Promise<PreparedOpen>

/**
 * A way to reach a host. `request` resolves with the raw MCP result (or the saved or spilled wire form the
 * operation's `answer` maps) and rejects with an error of `McpWorkerError`, or with `signal.reason` when aborted
 * before anything was sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plane {
  readonly request: (call: Call) => Promise<unknown>
  readonly open: (prepared: PreparedOpen) => Promise<string>
  readonly status: (workerId: string) => Promise<WorkerStatus>
  readonly cancel: (workerId: string, requestId: string) => Promise<void>
  readonly close: (workerId: string, budgetMs: number | undefined) => Promise<WorkerStatus>
  readonly events: (workerId: string, capacity: number) => AsyncIterableIterator<ServerNotification> & AsyncDisposable
  readonly dispose: () => Promise<void>
}

/**
 * The iterator a plane's `events` answers, from its `next` and its `finish`: `return` and disposal both run `finish`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventsIterator: <A>(
  next: () => Promise<IteratorResult<A>>,
  finish: () => Promise<unknown>
) => AsyncIterableIterator<A> & AsyncDisposable = internal.eventsIterator
