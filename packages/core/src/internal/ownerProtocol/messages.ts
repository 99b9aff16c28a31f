/**
 * The messages between the host and one owner, as schemas: the control plane's `Schema.TaggedRequest`s and the
 * data plane's small tagged messages. Documented where they are public, in `OwnerProtocol`.
 */
import { WorkerError } from "@effect/platform/WorkerError"
import * as Schema from "effect/Schema"
import {
  CleanupSummary,
  DeliveryUnknown,
  FailureKind,
  InputRoundsExceeded,
  InvalidInput,
  OpenFailed,
  PreflightFailed,
  TaskEnded,
  ResultTooLarge,
  ServerError,
  UnusableResult,
  WorkerBusy,
  WorkerFailed
} from "../../McpWorkerError.js"

/**
 * What the worker's server declares it serves, of what a gateway re-serves (C161): only these members of its
 * capabilities cross to the host. @internal
 */
export const Serves = Schema.Struct({
  tools: Schema.optional(Schema.Struct({ listChanged: Schema.optional(Schema.Boolean) })),
  resources: Schema.optional(
    Schema.Struct({ subscribe: Schema.optional(Schema.Boolean), listChanged: Schema.optional(Schema.Boolean) })
  ),
  prompts: Schema.optional(Schema.Struct({ listChanged: Schema.optional(Schema.Boolean) })),
  completions: Schema.optional(Schema.Struct({}))
})

/** @internal */
export const OpenInfo = Schema.Struct({
  pid: Schema.NullOr(Schema.Number),
  /** The protocol era the worker's client negotiated: `initialize` (legacy) or `server/discover` (modern). */
  era: Schema.NullOr(Schema.Literal("legacy", "modern")),
  protocolVersion: Schema.NullOr(Schema.String),
  server: Schema.NullOr(Schema.Struct({ name: Schema.String, version: Schema.String })),
  /** Whether the server runs tool calls as tasks (C72, C75), what a gateway of it declares (C156). */
  tasks: Schema.Boolean,
  serves: Schema.optional(Serves)
})

/** A worker's tool filter as it travels to the owner, checked by the caller (`ToolFilter.check`). @internal */
export const ToolFilter = Schema.Struct({
  allow: Schema.optional(Schema.Array(Schema.String)),
  deny: Schema.optional(Schema.Array(Schema.String))
})

/** @internal */
export class Open extends Schema.TaggedRequest<Open>()("Open", {
  failure: Schema.Union(OpenFailed, WorkerError),
  success: OpenInfo,
  payload: {
    workerId: Schema.String,
    marker: Schema.String,
    config: Schema.String,
    timeoutMs: Schema.Number,
    /** The server requests the host has a handler for: the client declares these capabilities, and no others. */
    handlers: Schema.optional(Schema.Array(Schema.Literal("elicitation", "sampling", "roots"))),
    /**
     * The host's interactive OAuth client (C34), as JSON text: redirect URL, client metadata, a pre-registered
     * client. Used for a server that asks for authorization when the config has no `auth` of its own.
     */
    oauth: Schema.optional(Schema.String),
    /** The worker's spill directory (`open`'s `onTooLarge`): where a `callTool` result over the limit goes. */
    spill: Schema.optional(Schema.String),
    /** Which tools the worker offers (C59): the owner filters every `tools/list` and refuses every other call. */
    tools: Schema.optional(ToolFilter)
  }
}) {}

/** @internal */
export class Close extends Schema.TaggedRequest<Close>()("Close", {
  failure: WorkerError,
  success: CleanupSummary,
  payload: { budgetMs: Schema.Number }
}) {}

/** @internal */
export const ControlRequest = Schema.Union(Open, Close)

/** @internal */
export const Method = Schema.Literal(
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "ping",
  "tasks/get",
  "tasks/result",
  "tasks/cancel",
  "tasks/list"
)

/** @internal */
export const ReplyTo = Schema.Struct({
  channel: Schema.String,
  callId: Schema.Number,
  /** The caller's thread, when it takes its replies on a port (`ReplyPort`). */
  thread: Schema.optional(Schema.Number)
})

/**
 * The span a message's work is part of, in the thread that sent it: `[traceId, spanId, sampled]`, as
 * `@effect/platform`'s Worker carries it with each request, then the W3C `tracestate` and `baggage` its trace carries
 * as their header text (`""`: none; both absent when neither is). Only a call made while tracing is on carries one;
 * the receiving side opens its own span as the child of this one (`Effect.withParentSpan` with an external span).
 *
 * @internal
 */
export const TraceContext = Schema.Tuple(
  Schema.String,
  Schema.String,
  Schema.Boolean,
  Schema.optionalElement(Schema.String),
  Schema.optionalElement(Schema.String)
)

/** A call's spill directory (`onTooLarge`), or `false`: the call fails a result over the limit. @internal */
export const Spill = Schema.Union(Schema.String, Schema.Literal(false))

/**
 * A request's fields, defined once: every plane's message of a request carries them (the owner's `Request`, a remote
 * thread's `RemoteCall` and `Direct`, a socket's payload), so a new request option is an edit here and at its two
 * ends. The caller's plain type (`@mcp-worker/caller`'s `Envelope`) is proven equal to this one by the compiler.
 *
 * @internal
 */
export const Envelope = Schema.Struct({
  method: Method,
  params: Schema.String,
  /** The caller's deadline, `Date.now()` epoch ms: one clock for every thread and process of a machine (C9). */
  deadline: Schema.Number,
  /** How long, in ms, the request may go without the server's progress before the owner ends it (C121). */
  idleMs: Schema.optional(Schema.Number),
  /** The caller reads the server's progress (`onProgress`): the request carries a progress token. */
  progress: Schema.optional(Schema.Boolean),
  /** The absolute path the owner writes the result to (`saveTo`); the answer is then its summary. */
  saveTo: Schema.optional(Schema.String),
  /** The call's own spill (`onTooLarge`): a directory, or `false` for none; absent, the worker's applies. */
  spill: Schema.optional(Spill),
  /** The caller's span: the owner's span of this request is its child (C83, C84). */
  trace: Schema.optional(TraceContext)
})

/** @internal */
export const RequestMessage = Schema.TaggedStruct("Request", { requestId: Schema.String, ...Envelope.fields })

/** @internal */
export const CancelMessage = Schema.TaggedStruct("Cancel", {
  requestId: Schema.String,
  reason: Schema.Literal("timeout", "interrupted", "cancelled"),
  /**
   * The owner answers whether it cancelled the request (`CancelAnswerMessage`): a `cancel` of a request the owner
   * thread took straight from a remote caller, which only the owner knows of.
   */
  confirm: Schema.optional(Schema.Boolean)
})

/** @internal */
export const ServerMethod = Schema.Literal(
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
  "oauth/authorize",
  "oauth/tokens",
  "oauth/saveTokens"
)

/** @internal */
export const ServerReplyMessage = Schema.TaggedStruct("ServerReply", {
  serverRequestId: Schema.String,
  result: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
})

/**
 * The host asks its owner to answer once everything the owner posted before has reached the host (`SyncedMessage`,
 * on the same ordered channel): a `status` read after a call's answer then counts what came before that answer (C30).
 *
 * @internal
 */
export const SyncMessage = Schema.TaggedStruct("Sync", { syncId: Schema.Number })

/** @internal */
export const HostMessage = Schema.Union(RequestMessage, CancelMessage, ServerReplyMessage, SyncMessage)

/** @internal */
export const SuccessMessage = Schema.TaggedStruct("Success", {
  requestId: Schema.String,
  result: Schema.String,
  envelope: Schema.Boolean
})

/** @internal */
export const Progress = Schema.Struct({
  progress: Schema.Number,
  total: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String)
})

/** @internal */
export const ProgressMessage = Schema.TaggedStruct("Progress", { requestId: Schema.String, progress: Progress })

/** @internal */
export const ServerRequestMessage = Schema.TaggedStruct("ServerRequest", {
  serverRequestId: Schema.String,
  method: ServerMethod,
  params: Schema.String,
  /** The owner's request in flight when the server asked, if any: the question is taken to be part of it (C151). */
  requestId: Schema.optional(Schema.String)
})

/** @internal */
export const NotificationMethod = Schema.Literal(
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/prompts/list_changed",
  "notifications/message"
)

/** @internal */
export const NotificationMessage = Schema.TaggedStruct("Notification", {
  method: NotificationMethod,
  params: Schema.String
})

/** @internal */
export const FailureMessage = Schema.TaggedStruct("Failure", {
  requestId: Schema.String,
  error: Schema.Union(
    ServerError,
    WorkerFailed,
    ResultTooLarge,
    InvalidInput,
    WorkerBusy,
    DeliveryUnknown,
    InputRoundsExceeded,
    UnusableResult,
    PreflightFailed,
    TaskEnded
  )
})

/** @internal */
export const CancelAnswerMessage = Schema.TaggedStruct("CancelAnswer", {
  requestId: Schema.String,
  cancelled: Schema.Boolean,
  /** A request the owner thread took straight from a remote caller, cancelled: the host answers that caller. */
  replyTo: Schema.optional(ReplyTo)
})

/** How a request taken directly ended, as the metrics count it (C80): never its data. @internal */
export const ObservedOutcome = Schema.Literal(
  "result",
  "is_error",
  "ServerError",
  "WorkerFailed",
  "ResultTooLarge",
  "InvalidInput",
  "WorkerBusy",
  "DeliveryUnknown",
  "DeadlineExceeded",
  "InputRoundsExceeded",
  "UnusableResult",
  "PreflightFailed",
  "TaskEnded"
)

/** @internal */
export const ObservedRequest = Schema.Struct({
  method: Method,
  outcome: ObservedOutcome,
  delivery: Schema.Literal("delivered", "not_sent", "unknown"),
  /** Absent for a refusal: it was never sent. */
  seconds: Schema.optional(Schema.Number),
  spilled: Schema.optional(Schema.Number)
})

/**
 * The requests an owner thread took straight from remote callers and answered itself, counted for the host's metrics
 * in batches: the host is not on their way (C80).
 *
 * @internal
 */
export const ObservedMessage = Schema.TaggedStruct("Observed", { requests: Schema.Array(ObservedRequest) })

/** @internal */
export const SyncedMessage = Schema.TaggedStruct("Synced", { syncId: Schema.Number })

/** @internal */
export const SpawnedMessage = Schema.TaggedStruct("Spawned", { pid: Schema.Number })

/** @internal */
export const FailedMessage = Schema.TaggedStruct("Failed", {
  kind: FailureKind,
  message: Schema.String,
  at: Schema.String
})

/** @internal */
export const OwnerMessage = Schema.Union(
  SuccessMessage,
  SyncedMessage,
  ObservedMessage,
  CancelAnswerMessage,
  FailureMessage,
  SpawnedMessage,
  FailedMessage,
  ProgressMessage,
  ServerRequestMessage,
  NotificationMessage
)
