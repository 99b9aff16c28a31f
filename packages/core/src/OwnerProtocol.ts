/**
 * The protocol between the host registry and one owner thread, in two planes:
 *
 * - the control plane (`Open`, `Close`) goes through `@effect/platform` Worker as `Schema.TaggedRequest`s:
 *   it runs once per worker life, so its cost does not matter, and it gives thread spawn, handshake and
 *   exit handling;
 * - the data plane (requests, cancels, events) goes over a dedicated `MessagePort` as small plain messages,
 *   with arguments and results as JSON text, validated with Schema at both edges. A request there costs a
 *   fraction of a platform Worker round trip.
 *
 * @since 0.1.0
 */
import { WorkerError } from "@effect/platform/WorkerError"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import {
  CleanupSummary,
  DeliveryUnknown,
  FailureKind,
  InvalidInput,
  OpenFailed,
  ResultTooLarge,
  ServerError,
  WorkerBusy,
  WorkerFailed
} from "./McpWorkerError.js"

/**
 * What an owner reports once its connection is initialized.
 *
 * @since 0.1.0
 * @category models
 */
export const OpenInfo = Schema.Struct({
  pid: Schema.NullOr(Schema.Number),
  protocolVersion: Schema.NullOr(Schema.String),
  server: Schema.NullOr(Schema.Struct({ name: Schema.String, version: Schema.String }))
})

/**
 * What an owner reports once its connection is initialized.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenInfo = typeof OpenInfo.Type

/**
 * Connect the owner's client. `config` is the normalized config in its wire form (JSON text).
 *
 * @since 0.1.0
 * @category control plane
 */
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
    oauth: Schema.optional(Schema.String)
  }
}) {}

/**
 * Close the client and end everything the connection started, within `budgetMs`.
 *
 * @since 0.1.0
 * @category control plane
 */
export class Close extends Schema.TaggedRequest<Close>()("Close", {
  failure: WorkerError,
  success: CleanupSummary,
  payload: { budgetMs: Schema.Number }
}) {}

/**
 * Every control-plane request an owner thread serves.
 *
 * @since 0.1.0
 * @category control plane
 */
export const ControlRequest = Schema.Union(Open, Close)

/**
 * A control-plane request.
 *
 * @since 0.1.0
 * @category control plane
 */
export type ControlRequest = typeof ControlRequest.Type

/**
 * The MCP methods a data-plane request may carry.
 *
 * @since 0.1.0
 * @category data plane
 */
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
  "ping"
)

/**
 * An MCP method a data-plane request may carry.
 *
 * @since 0.1.0
 * @category data plane
 */
export type Method = typeof Method.Type

/**
 * Where an owner thread posts a request's success itself: the reply channel of the remote thread that made the call,
 * and the call's number there. The owner then tells the host only that the request ended (`Delivered`), so the
 * result crosses one thread hand-over instead of two. Failures, progress and everything else still go through the
 * host.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ReplyTo = Schema.Struct({ channel: Schema.String, callId: Schema.Number })

/**
 * Where an owner thread posts a request's success itself.
 *
 * @since 0.1.0
 * @category data plane
 */
export type ReplyTo = typeof ReplyTo.Type

/**
 * The span a message's work is part of, in the thread that sent it: `[traceId, spanId, sampled]`, as
 * `@effect/platform`'s Worker carries it with each request. Only a call made while tracing is on carries one; the
 * receiving side opens its own span as the child of this one (`Effect.withParentSpan` with an external span).
 *
 * @since 0.1.0
 * @category data plane
 */
export const TraceContext = Schema.Tuple(Schema.String, Schema.String, Schema.Boolean)

/**
 * The span a message's work is part of, in the thread that sent it.
 *
 * @since 0.1.0
 * @category data plane
 */
export type TraceContext = typeof TraceContext.Type

/**
 * Host → owner: send one MCP request. `params` is JSON text; `timeoutMs` is what is left of the caller's
 * budget, used only to keep the SDK's own request timer from cutting in first.
 *
 * @since 0.1.0
 * @category data plane
 */
export const RequestMessage = Schema.TaggedStruct("Request", {
  requestId: Schema.String,
  method: Method,
  params: Schema.String,
  timeoutMs: Schema.Number,
  /** The caller wants the server's progress notifications for this request (it then carries a progress token). */
  progress: Schema.optional(Schema.Boolean),
  /** The absolute path the result is written to by the owner (`saveTo`); the answer is then its summary. */
  saveTo: Schema.optional(Schema.String),
  /** A caller in another thread that takes a success straight from the owner (see `ReplyTo`). */
  replyTo: Schema.optional(ReplyTo),
  /**
   * How many remote callers' requests taken straight by the owner thread (`StartedMessage`) the host had read when it
   * sent this one; absent: none. The owner refuses (`WorkerBusy`) a request sent before the host knew of one it took
   * since, so that the host, reading that `Started` with this request in flight, knows it was not sent.
   */
  seen: Schema.optional(Schema.Number),
  /** The caller's span (a remote thread's, or the host's own): the owner's span of this request is its child. */
  trace: Schema.optional(TraceContext)
})

/**
 * Host → owner: cancel exactly this request, if it is still in flight.
 *
 * @since 0.1.0
 * @category data plane
 */
export const CancelMessage = Schema.TaggedStruct("Cancel", {
  requestId: Schema.String,
  reason: Schema.Literal("timeout", "interrupted", "cancelled"),
  /**
   * The owner answers whether it cancelled the request (`CancelAnswerMessage`): a `cancel` of a request whose success
   * an owner thread posts to its caller itself, which it may have posted already.
   */
  confirm: Schema.optional(Schema.Boolean)
})

/**
 * The requests a server may send its client, which the host answers with its handlers.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ServerMethod = Schema.Literal(
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
  "oauth/authorize",
  "oauth/tokens",
  "oauth/saveTokens"
)

/**
 * A request a server may send its client.
 *
 * @since 0.1.0
 * @category data plane
 */
export type ServerMethod = typeof ServerMethod.Type

/**
 * Host → owner: the answer to a server's request, as JSON text, or the error to answer it with.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ServerReplyMessage = Schema.TaggedStruct("ServerReply", {
  serverRequestId: Schema.String,
  result: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
})

/**
 * Every data-plane message from the host to an owner.
 *
 * @since 0.1.0
 * @category data plane
 */
export const HostMessage = Schema.Union(RequestMessage, CancelMessage, ServerReplyMessage)

/**
 * A data-plane message from the host to an owner.
 *
 * @since 0.1.0
 * @category data plane
 */
export type HostMessage = typeof HostMessage.Type

/**
 * Owner → host: the MCP result of a request, as JSON text: the result itself, or (`envelope`) the server's
 * whole JSON-RPC response line, whose `result` it is.
 *
 * @since 0.1.0
 * @category data plane
 */
export const SuccessMessage = Schema.TaggedStruct("Success", {
  requestId: Schema.String,
  result: Schema.String,
  envelope: Schema.Boolean
})

/**
 * Owner → host: the request's success went straight to its caller (`replyTo`); the request has ended.
 *
 * @since 0.1.0
 * @category data plane
 */
export const DeliveredMessage = Schema.TaggedStruct("Delivered", { requestId: Schema.String })

/**
 * One `notifications/progress` of a request in flight, as the server sent it.
 *
 * @since 0.1.0
 * @category data plane
 */
export const Progress = Schema.Struct({
  progress: Schema.Number,
  total: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String)
})

/**
 * One `notifications/progress` of a request in flight, as the server sent it.
 *
 * @since 0.1.0
 * @category data plane
 */
export type Progress = typeof Progress.Type

/**
 * Owner → host: the server reported progress on the request in flight.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ProgressMessage = Schema.TaggedStruct("Progress", { requestId: Schema.String, progress: Progress })

/**
 * Owner → host: the server asks the client something (`params` is JSON text); the host answers with `ServerReply`.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ServerRequestMessage = Schema.TaggedStruct("ServerRequest", {
  serverRequestId: Schema.String,
  method: ServerMethod,
  params: Schema.String
})

/**
 * The server notifications a worker hands on to its callers (`McpWorkers.events`): list changes, resource updates
 * and log messages. Progress and cancellation belong to their request and are handled there.
 *
 * @since 0.1.0
 * @category data plane
 */
export const NotificationMethod = Schema.Literal(
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/prompts/list_changed",
  "notifications/message"
)

/**
 * A server notification a worker hands on to its callers.
 *
 * @since 0.1.0
 * @category data plane
 */
export type NotificationMethod = typeof NotificationMethod.Type

/**
 * Owner → host: the server sent a notification (`params` is its params' JSON text).
 *
 * @since 0.1.0
 * @category data plane
 */
export const NotificationMessage = Schema.TaggedStruct("Notification", {
  method: NotificationMethod,
  params: Schema.String
})

/**
 * Owner → host: a request ended with a typed failure. `WorkerBusy`: the host's request met a remote caller's request
 * that the owner thread had taken first (see `StartedMessage`), and was not sent. `DeliveryUnknown`: a remote caller
 * interrupted its request on the owner's own channel.
 *
 * @since 0.1.0
 * @category data plane
 */
export const FailureMessage = Schema.TaggedStruct("Failure", {
  requestId: Schema.String,
  error: Schema.Union(ServerError, WorkerFailed, ResultTooLarge, InvalidInput, WorkerBusy, DeliveryUnknown)
})

/**
 * Owner → host: the answer to a `Cancel` that asked for one: whether the request was still in flight and is now
 * cancelled (its caller is then the host's to answer), or had already ended (its answer is on its way).
 *
 * @since 0.1.0
 * @category data plane
 */
export const CancelAnswerMessage = Schema.TaggedStruct("CancelAnswer", {
  requestId: Schema.String,
  cancelled: Schema.Boolean
})

/**
 * Owner → host: an owner thread took a remote caller's request straight from that caller's thread, named it
 * `requestId`, and is about to send it. Posted before the request is written to the server, so the host, which reads
 * its port ahead whenever it needs the worker's state, reports the worker busy with exactly this request, refuses its
 * own requests meanwhile, and ends this one at `deadline` (`Date.now()` epoch ms) as it ends its own. The request ends
 * as a host request does: `Delivered` (the success went to `replyTo`) or `Failure`.
 *
 * @since 0.1.0
 * @category data plane
 */
export const StartedMessage = Schema.TaggedStruct("Started", {
  requestId: Schema.String,
  method: Method,
  replyTo: ReplyTo,
  deadline: Schema.Number,
  /** The remote caller's span, which the host's span of this request is a child of, as the owner's is. */
  trace: Schema.optional(TraceContext)
})

/**
 * Owner → host: the server process started (sent before `initialize`, so the host can always end its tree).
 *
 * @since 0.1.0
 * @category data plane
 */
export const SpawnedMessage = Schema.TaggedStruct("Spawned", { pid: Schema.Number })

/**
 * Owner → host: the connection died outside of any request.
 *
 * @since 0.1.0
 * @category data plane
 */
export const FailedMessage = Schema.TaggedStruct("Failed", {
  kind: FailureKind,
  message: Schema.String,
  at: Schema.String
})

/**
 * Every data-plane message from an owner to the host.
 *
 * @since 0.1.0
 * @category data plane
 */
export const OwnerMessage = Schema.Union(
  SuccessMessage,
  DeliveredMessage,
  StartedMessage,
  CancelAnswerMessage,
  FailureMessage,
  SpawnedMessage,
  FailedMessage,
  ProgressMessage,
  ServerRequestMessage,
  NotificationMessage
)

/**
 * A data-plane message from an owner to the host.
 *
 * @since 0.1.0
 * @category data plane
 */
export type OwnerMessage = typeof OwnerMessage.Type

/**
 * A data-plane message from an owner to the host, as it crosses the port.
 *
 * @since 0.1.0
 * @category data plane
 */
export type OwnerMessageEncoded = typeof OwnerMessage.Encoded

/**
 * `Schema.decodeUnknownEither` for messages from another thread or process: a value whose inspection throws (a
 * `_tag` whose `toString` is not a function, a getter that throws) is refused like any other value that does not
 * match, instead of throwing into the message handler that reads it.
 *
 * @since 0.1.0
 * @category data plane
 */
export const safeDecoder = <A, I>(
  schema: Schema.Schema<A, I, never>
): ((raw: unknown) => Either.Either<A, ParseResult.ParseError>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (raw) => {
    try {
      return decode(raw)
    } catch {
      return Either.left(
        new ParseResult.ParseError({ issue: new ParseResult.Type(schema.ast, raw, "could not be inspected") })
      )
    }
  }
}

/**
 * Validates a message that arrived at an owner.
 *
 * @since 0.1.0
 * @category data plane
 */
export const decodeHostMessage = (raw: unknown): Either.Either<HostMessage, ParseResult.ParseError> =>
  isPlainRequest(raw) ? Either.right(raw) : decodeHostMessageSchema(raw)

const decodeHostMessageSchema = safeDecoder(HostMessage)

const methods: ReadonlySet<unknown> = new Set(Method.literals)

// The message of every call, checked by hand: the same rules as `RequestMessage`, without building a parse tree.
// Anything else, or anything that does not pass, goes through the Schema and its errors.
const isPlainRequest = (raw: unknown): raw is typeof RequestMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Request" &&
    typeof message.requestId === "string" &&
    methods.has(message.method) &&
    typeof message.params === "string" &&
    typeof message.timeoutMs === "number" &&
    (message.progress === undefined || typeof message.progress === "boolean") &&
    (message.saveTo === undefined || typeof message.saveTo === "string") &&
    (message.replyTo === undefined || isReplyTo(message.replyTo)) &&
    (message.seen === undefined || typeof message.seen === "number") &&
    (message.trace === undefined || isTraceContext(message.trace))
  )
}

const isTraceContext = (raw: unknown): boolean =>
  Array.isArray(raw) &&
  raw.length === 3 &&
  typeof raw[0] === "string" &&
  typeof raw[1] === "string" &&
  typeof raw[2] === "boolean"

const isReplyTo = (raw: unknown): boolean => {
  if (typeof raw !== "object" || raw === null) return false
  const replyTo = raw as Record<string, unknown>
  return typeof replyTo.channel === "string" && typeof replyTo.callId === "number"
}

/**
 * Validates a message that arrived at the host.
 *
 * @since 0.1.0
 * @category data plane
 */
export const decodeOwnerMessage = (raw: unknown): Either.Either<OwnerMessage, ParseResult.ParseError> =>
  isPlainSuccess(raw) || isPlainDelivered(raw) || isPlainStarted(raw)
    ? Either.right(raw)
    : decodeOwnerMessageSchema(raw)

const decodeOwnerMessageSchema = safeDecoder(OwnerMessage)

// The answer of every call, checked by hand as `SuccessMessage` would check it.
const isPlainSuccess = (raw: unknown): raw is typeof SuccessMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Success" &&
    typeof message.requestId === "string" &&
    typeof message.result === "string" &&
    typeof message.envelope === "boolean"
  )
}

// The end of every call whose success went straight to a remote caller, checked by hand as `DeliveredMessage` would.
const isPlainDelivered = (raw: unknown): raw is typeof DeliveredMessage.Type =>
  typeof raw === "object" &&
  raw !== null &&
  (raw as Record<string, unknown>)._tag === "Delivered" &&
  typeof (raw as Record<string, unknown>).requestId === "string"

// The start of every call a remote caller sent an owner thread directly, checked by hand as `StartedMessage` would.
const isPlainStarted = (raw: unknown): raw is typeof StartedMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Started" &&
    typeof message.requestId === "string" &&
    methods.has(message.method) &&
    isReplyTo(message.replyTo) &&
    typeof message.deadline === "number" &&
    (message.trace === undefined || isTraceContext(message.trace))
  )
}

/**
 * Encodes a message for the host (tagged errors become plain data).
 *
 * @since 0.1.0
 * @category data plane
 */
export const encodeOwnerMessage = Schema.encodeSync(OwnerMessage)
