/** The messages between the host and one owner; public in `OwnerProtocol`. */
import { WorkerError } from "@effect/platform/WorkerError"
import * as Schema from "effect/Schema"
import { notificationMethods } from "@mcp-worker/caller/Plane"
import {
  CleanupSummary,
  DeadlineExceeded,
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

/** C161 @internal */
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
  era: Schema.NullOr(Schema.Literal("legacy", "modern")),
  protocolVersion: Schema.NullOr(Schema.String),
  server: Schema.NullOr(Schema.Struct({ name: Schema.String, version: Schema.String })),
  /** C72, C75, C156 */
  tasks: Schema.Boolean,
  serves: Schema.optional(Serves)
})
/** @internal */
export type OpenInfo = typeof OpenInfo.Type

/** The caller checks it (`ToolFilter.check`). @internal */
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
    /** The only capabilities the client declares. */
    handlers: Schema.optional(Schema.Array(Schema.Literal("elicitation", "sampling", "roots"))),
    /** C34: JSON text, for a config without `auth`. */
    oauth: Schema.optional(Schema.String),
    spill: Schema.optional(Schema.String),
    /** C59 */
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
export type ControlRequest = typeof ControlRequest.Type

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
export type Method = typeof Method.Type

/** @internal */
export const ReplyTo = Schema.Struct({
  channel: Schema.String,
  callId: Schema.Number,
  /** Set when replies go to a port. */
  thread: Schema.optional(Schema.Number)
})
/** @internal */
export type ReplyTo = typeof ReplyTo.Type

/**
 * `[traceId, spanId, sampled]` as `@effect/platform`'s Worker carries it, then `tracestate` and `baggage` (`""`:
 * none). @internal
 */
export const TraceContext = Schema.Tuple(
  Schema.String,
  Schema.String,
  Schema.Boolean,
  Schema.optionalElement(Schema.String),
  Schema.optionalElement(Schema.String)
)
/** @internal */
export type TraceContext = typeof TraceContext.Type

/** `false`: the call fails a result over the limit. @internal */
export const Spill = Schema.Union(Schema.String, Schema.Literal(false))

/** Every plane's request carries these; the compiler proves `@mcp-worker/caller`'s `Envelope` equal. @internal */
export const Envelope = Schema.Struct({
  method: Method,
  params: Schema.String,
  /** C9: epoch ms, one clock for every thread and process. */
  deadline: Schema.Number,
  /** C121 */
  idleMs: Schema.optional(Schema.Number),
  progress: Schema.optional(Schema.Boolean),
  saveTo: Schema.optional(Schema.String),
  /** Absent: the worker's applies. */
  spill: Schema.optional(Spill),
  /** C83, C84 */
  trace: Schema.optional(TraceContext)
})

/** @internal */
export const RequestMessage = Schema.TaggedStruct("Request", { requestId: Schema.String, ...Envelope.fields })

/** @internal */
export const CancelMessage = Schema.TaggedStruct("Cancel", {
  requestId: Schema.String,
  reason: Schema.Literal("timeout", "interrupted", "cancelled"),
  /** Only the owner knows of a request it took straight from a remote caller, so it answers the `cancel`. */
  confirm: Schema.optional(Schema.Boolean)
})

/** @internal */
export const ServerReplyMessage = Schema.TaggedStruct("ServerReply", {
  serverRequestId: Schema.String,
  result: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
})

/** C30: answered on the same ordered channel, so a `status` counts all that came before. @internal */
export const SyncMessage = Schema.TaggedStruct("Sync", { syncId: Schema.Number })

/** @internal */
export const HostMessage = Schema.Union(RequestMessage, CancelMessage, ServerReplyMessage, SyncMessage)
/** @internal */
export type HostMessage = typeof HostMessage.Type

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
export type Progress = typeof Progress.Type

/** @internal */
export const ProgressMessage = Schema.TaggedStruct("Progress", { requestId: Schema.String, progress: Progress })

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
export type ServerMethod = typeof ServerMethod.Type

/** @internal */
export const ServerRequestMessage = Schema.TaggedStruct("ServerRequest", {
  serverRequestId: Schema.String,
  method: ServerMethod,
  params: Schema.String,
  /** C151 */
  requestId: Schema.optional(Schema.String)
})

/** @internal */
export const NotificationMethod = Schema.Literal(...notificationMethods)
/** @internal */
export type NotificationMethod = typeof NotificationMethod.Type

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
    TaskEnded,
    DeadlineExceeded
  )
})

/** @internal */
export const CancelAnswerMessage = Schema.TaggedStruct("CancelAnswer", {
  requestId: Schema.String,
  cancelled: Schema.Boolean,
  /** The host answers that caller. */
  replyTo: Schema.optional(ReplyTo)
})

/** C80: never its data. @internal */
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
  /** Absent for a refusal. */
  seconds: Schema.optional(Schema.Number),
  spilled: Schema.optional(Schema.Number)
})

/** C80: the host is not on these requests' way. @internal */
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
/** @internal */
export type OwnerMessage = typeof OwnerMessage.Type
