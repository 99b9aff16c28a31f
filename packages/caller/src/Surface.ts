/**
 * What every surface offers beside the request table: the life cycle (`open`, `status`, `cancel`, `close`, `events`)
 * and the agent-host operations (`openAll`, `closeAll`, `describe`, `tools`), as plain signatures over the types a
 * face gives. Each face maps them to its own runtime's effects and streams (`Methods`), so an operation's arguments,
 * answer and failures are declared once for every face.
 *
 * @since 0.1.0
 */
import type { RequestTag } from "./McpWorkerError.js"

/**
 * One operation as plain types: its arguments, its answer, its failures, and whether it answers once (`"effect"`)
 * or as a stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Signature<Args extends ReadonlyArray<unknown>, A, E, Kind extends "effect" | "stream" = "effect"> {
  readonly args: Args
  readonly answer: A
  readonly failure: E
  readonly kind: Kind
}

/**
 * A runtime's effect and stream types as a type lambda over `A` and `E` (as Effect's own `TypeLambda` is): a face
 * extends it with `effect: Effect.Effect<this["A"], this["E"]>` and the like.
 *
 * @since 0.1.0
 * @category models
 */
export interface Runtime {
  readonly A: unknown
  readonly E: unknown
  readonly effect: unknown
  readonly stream: unknown
}

/**
 * The methods a table of signatures becomes in a runtime.
 *
 * @since 0.1.0
 * @category models
 */
export type Methods<S, F extends Runtime> = {
  readonly [K in keyof S]: S[K] extends Signature<infer Args, infer A, infer E, infer Kind>
    ? (...args: Args) => (F & { readonly A: A; readonly E: E })[Kind]
    : never
}

/**
 * The types a face gives the table: its config and option shapes, its worker id and status, and its errors. A face
 * declares its own interface with every slot rather than extending this one, which would give a slot it leaves out
 * `unknown`: the tables' `T extends Types` then refuses an interface that misses one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Types {
  readonly config: unknown
  readonly workerId: string
  readonly status: unknown
  readonly notification: unknown
  readonly openOptions: unknown
  readonly closeOptions: unknown
  readonly eventsOptions: unknown
  readonly document: unknown
  readonly openAllOptions: unknown
  readonly describeOptions: unknown
  readonly requestOptions: unknown
  readonly binding: unknown
  /** Every error of the face, told apart by `_tag`. */
  readonly error: { readonly _tag: string }
}

type Failure<T extends Types, Tag extends string> = Extract<T["error"], { readonly _tag: Tag }>

/**
 * The life-cycle operations of a surface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lifecycle<T extends Types> {
  readonly open: Signature<
    [config: T["config"], options?: T["openOptions"]],
    T["workerId"],
    Failure<T, "OpenFailed" | "InvalidInput" | "HostUnavailable">
  >
  readonly status: Signature<
    [id: string],
    T["status"],
    Failure<T, "UnknownWorker" | "InvalidInput" | "HostUnavailable">
  >
  readonly cancel: Signature<
    [id: string, requestId: string],
    void,
    Failure<T, "UnknownWorker" | "InvalidInput" | "RequestNotPending" | "HostUnavailable">
  >
  readonly close: Signature<
    [id: string, options?: T["closeOptions"]],
    T["status"],
    Failure<T, "UnknownWorker" | "InvalidInput" | "CloseFailed" | "HostUnavailable">
  >
  /**
   * The worker's server notifications from now on (`tools/list_changed`, `resources/list_changed`,
   * `resources/updated`, `prompts/list_changed`, `notifications/message`), in the order the server sent them. Each
   * subscriber has its own bounded buffer: one that does not keep up loses the oldest, never memory. The stream
   * ends when the worker closes or its connection is gone.
   */
  readonly events: Signature<
    [id: string, options?: T["eventsOptions"]],
    T["notification"],
    Failure<T, "UnknownWorker" | "InvalidInput" | "HostUnavailable">,
    "stream"
  >
}

/**
 * An entry of `openAll` that opened: its worker's id.
 *
 * @since 0.1.0
 * @category models
 */
export interface Opened<Id> {
  readonly _tag: "Opened"
  readonly id: Id
}

/**
 * An entry that did not open, and why: the surface's `open` failure, or an `InvalidInput` for the entry itself (a
 * reference that cannot be filled in, a value `open` refuses), its path pointing into the file.
 *
 * @since 0.1.0
 * @category models
 */
export interface NotOpened<E> {
  readonly _tag: "Failed"
  readonly error: E
}

/**
 * An entry whose worker closed, with its final status (`cleanup.activeProcesses === 0`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Closed<Status> {
  readonly _tag: "Closed"
  readonly status: Status
}

/**
 * An entry whose close failed (the id is kept by the surface, so `close` can be tried again).
 *
 * @since 0.1.0
 * @category models
 */
export interface NotClosed<Id, E> {
  readonly _tag: "Failed"
  readonly id: Id
  readonly error: E
}

/**
 * The agent-host operations of a surface, over its own `open`, `close`, `listTools` and `callTool`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentHost<T extends Types> {
  /**
   * Opens every entry of a config document concurrently (references filled in from the caller's environment),
   * answering per entry: its id, or why it did not open. Never fails as a whole; interrupted, it closes what opened
   * (C41).
   */
  readonly openAll: Signature<
    [document: T["document"], options?: T["openAllOptions"]],
    Readonly<
      Record<string, Opened<T["workerId"]> | NotOpened<Failure<T, "OpenFailed" | "HostUnavailable" | "InvalidInput">>>
    >,
    never
  >
  /** Closes every opened worker of an `openAll` result (or a record of ids), one confirmed cleanup each. */
  readonly closeAll: Signature<
    [
      workers: Readonly<Record<string, Opened<T["workerId"]> | NotOpened<unknown> | string>>,
      options?: T["closeOptions"]
    ],
    Readonly<
      Record<
        string,
        | Closed<T["status"]>
        | NotClosed<T["workerId"], Failure<T, "UnknownWorker" | "InvalidInput" | "CloseFailed" | "HostUnavailable">>
      >
    >,
    never
  >
  /** TypeScript declarations of the worker's tools (every page of `tools/list`). */
  readonly describe: Signature<[id: string, options?: T["describeOptions"]], string, Failure<T, RequestTag>>
  /** The worker's tools (every page of `tools/list`) as methods over `callTool`. */
  readonly tools: Signature<[id: string, options?: T["requestOptions"]], T["binding"], Failure<T, RequestTag>>
}
