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
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import type * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import type * as Tracer from "effect/Tracer"
import * as checks from "../internal/ownerProtocol/checks.js"
import * as internal from "../internal/ownerProtocol/messages.js"
import * as traceContext from "../internal/ownerProtocol/traceContext.js"

/**
 * What an owner reports once its connection is initialized.
 *
 * @since 0.1.0
 * @category models
 */
export const OpenInfo: typeof internal.OpenInfo = internal.OpenInfo

/**
 * What an owner reports once its connection is initialized.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenInfo = typeof OpenInfo.Type

/**
 * A worker's tool filter as plain data, as it travels with an open (checked by `ToolFilter.check` where it was given).
 *
 * @since 0.1.0
 * @category models
 */
export const ToolFilter: typeof internal.ToolFilter = internal.ToolFilter

/**
 * Connect the owner's client. `config` is the normalized config in its wire form (JSON text).
 *
 * @since 0.1.0
 * @category control plane
 */
export const Open: typeof internal.Open = internal.Open

/**
 * Connect the owner's client. `config` is the normalized config in its wire form (JSON text).
 *
 * @since 0.1.0
 * @category control plane
 */
export type Open = internal.Open

/**
 * Close the client and end everything the connection started, within `budgetMs`.
 *
 * @since 0.1.0
 * @category control plane
 */
export const Close: typeof internal.Close = internal.Close

/**
 * Close the client and end everything the connection started, within `budgetMs`.
 *
 * @since 0.1.0
 * @category control plane
 */
export type Close = internal.Close

/**
 * Every control-plane request an owner thread serves.
 *
 * @since 0.1.0
 * @category control plane
 */
export const ControlRequest: typeof internal.ControlRequest = internal.ControlRequest

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
export const Method: typeof internal.Method = internal.Method

/**
 * An MCP method a data-plane request may carry.
 *
 * @since 0.1.0
 * @category data plane
 */
export type Method = typeof Method.Type

/**
 * Where an owner thread answers a request it took straight from a remote thread: that thread's reply channel, and the
 * call's number there. The host is not on the way of such a request.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ReplyTo: typeof internal.ReplyTo = internal.ReplyTo

/**
 * Where an owner thread answers a request it took straight from a remote thread.
 *
 * @since 0.1.0
 * @category data plane
 */
export type ReplyTo = typeof ReplyTo.Type

/**
 * The span a message's work is part of, in the thread that sent it: `[traceId, spanId, sampled]`, as
 * `@effect/platform`'s Worker carries it with each request, then its trace's W3C `tracestate` and `baggage` (`""`:
 * none). Only a call made while tracing is on carries one.
 *
 * @since 0.1.0
 * @category data plane
 */
export const TraceContext: typeof internal.TraceContext = internal.TraceContext

/**
 * The span a message's work is part of, in the thread that sent it.
 *
 * @since 0.1.0
 * @category data plane
 */
export type TraceContext = typeof TraceContext.Type

/**
 * The context to send with a message that carries `span`'s work on: its ids, and the W3C `tracestate` and `baggage`
 * its trace carries (C84) — what a message brought, an OpenTelemetry span's trace state, the OpenTelemetry context's
 * baggage.
 *
 * @since 0.1.0
 * @category data plane
 */
export const traceContextOf: (span: Tracer.AnySpan) => TraceContext = traceContext.traceContextOf

/**
 * The trace context of a fiber's current span, whatever the tracer that made it, unless tracing is turned off
 * (`Effect.withTracerEnabled(false)`); `undefined` outside any span: such a call carries nothing (C83).
 *
 * @since 0.1.0
 * @category data plane
 */
export const traceContextOfFiber: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => TraceContext | undefined =
  traceContext.traceContextOfFiber

/**
 * Whether a fiber records spans (a tracer other than Effect's default one, `Effect.withTracerEnabled` not false): only
 * then does a surface open spans of its own.
 *
 * @since 0.1.0
 * @category data plane
 */
export const isTracing: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => boolean = traceContext.isTracing

/**
 * The external span of a message's span context, the parent of the receiving side's spans; it keeps the trace's
 * `tracestate` and `baggage` for `traceContextOf` below it.
 *
 * @since 0.1.0
 * @category data plane
 */
export const externalSpanOf: (trace: TraceContext) => Tracer.ExternalSpan = traceContext.externalSpanOf

/**
 * Runs `effect` below the current span with the `tracestate` and `baggage` of `trace`, for a request whose span's ids
 * arrived on their own (an `@effect/rpc` envelope).
 *
 * @since 0.1.0
 * @category data plane
 */
export const withCarried: <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  trace: TraceContext | undefined
) => Effect.Effect<A, E, R> = traceContext.withCarried

/**
 * A call's own spill (`onTooLarge`) as it travels: a directory, or `false` (the call fails a result over the limit,
 * whatever its worker's policy).
 *
 * @since 0.1.0
 * @category data plane
 */
export const Spill: typeof internal.Spill = internal.Spill

/**
 * A request's fields, as every plane's message of a request carries them: method, params, deadline, idle budget,
 * progress, `saveTo`, spill and trace. A new request option goes here (docs/architecture.md, "One request envelope").
 *
 * @since 0.1.0
 * @category data plane
 */
export const Envelope: typeof internal.Envelope = internal.Envelope

/**
 * Host → owner: send one MCP request, its `Envelope` under the host's `requestId`.
 *
 * @since 0.1.0
 * @category data plane
 */
export const RequestMessage: typeof internal.RequestMessage = internal.RequestMessage

/**
 * Host → owner: cancel exactly this request, if it is still in flight.
 *
 * @since 0.1.0
 * @category data plane
 */
export const CancelMessage: typeof internal.CancelMessage = internal.CancelMessage

/**
 * The requests a server may send its client, which the host answers with its handlers.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ServerMethod: typeof internal.ServerMethod = internal.ServerMethod

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
export const ServerReplyMessage: typeof internal.ServerReplyMessage = internal.ServerReplyMessage

/**
 * Every data-plane message from the host to an owner.
 *
 * @since 0.1.0
 * @category data plane
 */
export const HostMessage: typeof internal.HostMessage = internal.HostMessage

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
export const SuccessMessage: typeof internal.SuccessMessage = internal.SuccessMessage

/**
 * Owner → host: the requests an owner thread took straight from remote threads and answered itself, counted in
 * batches for the host's metrics (how each ended, never its data).
 *
 * @since 0.1.0
 * @category data plane
 */
export const ObservedMessage: typeof internal.ObservedMessage = internal.ObservedMessage

/**
 * One `notifications/progress` of a request in flight, as the server sent it.
 *
 * @since 0.1.0
 * @category data plane
 */
export const Progress: typeof internal.Progress = internal.Progress

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
export const ProgressMessage: typeof internal.ProgressMessage = internal.ProgressMessage

/**
 * Owner → host: the server asks the client something (`params` is JSON text); the host answers with `ServerReply`.
 *
 * @since 0.1.0
 * @category data plane
 */
export const ServerRequestMessage: typeof internal.ServerRequestMessage = internal.ServerRequestMessage

/**
 * The server notifications a worker hands on to its callers (`McpWorkers.events`): list changes, resource updates
 * and log messages. Progress and cancellation belong to their request and are handled there.
 *
 * @since 0.1.0
 * @category data plane
 */
export const NotificationMethod: typeof internal.NotificationMethod = internal.NotificationMethod

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
export const NotificationMessage: typeof internal.NotificationMessage = internal.NotificationMessage

/**
 * Owner → host: a request ended with a typed failure. `WorkerBusy`: another request is in flight (the owner decides,
 * for every caller), and this one was not sent.
 *
 * @since 0.1.0
 * @category data plane
 */
export const FailureMessage: typeof internal.FailureMessage = internal.FailureMessage

/**
 * Owner → host: the answer to a `Cancel` that asked for one: whether the request was still in flight and is now
 * cancelled (its caller answered `DeliveryUnknown{cancelled}`), or had already ended (its answer is on its way).
 *
 * @since 0.1.0
 * @category data plane
 */
export const CancelAnswerMessage: typeof internal.CancelAnswerMessage = internal.CancelAnswerMessage

/**
 * Owner → host: the server process started (sent before `initialize`, so the host can always end its tree).
 *
 * @since 0.1.0
 * @category data plane
 */
export const SpawnedMessage: typeof internal.SpawnedMessage = internal.SpawnedMessage

/**
 * Owner → host: the connection died outside of any request.
 *
 * @since 0.1.0
 * @category data plane
 */
export const FailedMessage: typeof internal.FailedMessage = internal.FailedMessage

/**
 * Every data-plane message from an owner to the host.
 *
 * @since 0.1.0
 * @category data plane
 */
export const OwnerMessage: typeof internal.OwnerMessage = internal.OwnerMessage

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
export const safeDecoder: <A, I>(
  schema: Schema.Schema<A, I, never>
) => (raw: unknown) => Either.Either<A, ParseResult.ParseError> = checks.safeDecoder

/**
 * A message's fast check, derived from its Schema: a predicate that accepts exactly what decoding the Schema accepts,
 * without building a parse tree, for the messages read on every call (what fails it goes through the Schema for its
 * errors). Structs, tuples, unions, literals, strings, numbers, booleans and `undefined` only; any other node throws
 * when the check is built.
 *
 * @since 0.1.0
 * @category data plane
 */
export const fastCheck: <A, I>(schema: Schema.Schema<A, I, never>) => (raw: unknown) => raw is A = checks.fastCheck

/**
 * Validates a message that arrived at an owner.
 *
 * @since 0.1.0
 * @category data plane
 */
export const decodeHostMessage: (raw: unknown) => Either.Either<HostMessage, ParseResult.ParseError> =
  checks.decodeHostMessage

/**
 * Validates a message that arrived at the host.
 *
 * @since 0.1.0
 * @category data plane
 */
export const decodeOwnerMessage: (raw: unknown) => Either.Either<OwnerMessage, ParseResult.ParseError> =
  checks.decodeOwnerMessage

/**
 * Encodes a message for the host (tagged errors become plain data).
 *
 * @since 0.1.0
 * @category data plane
 */
export const encodeOwnerMessage: (message: OwnerMessage) => OwnerMessageEncoded = checks.encodeOwnerMessage
