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
import type * as Messages from "../internal/ownerProtocol/messages.js"

export {
  /**
   * What an owner reports once its connection is initialized.
   *
   * @since 0.1.0
   * @category models
   */
  OpenInfo,
  /**
   * A worker's tool filter as plain data, as it travels with an open (checked by `ToolFilter.check` where it was given).
   *
   * @since 0.1.0
   * @category models
   */
  ToolFilter,
  /**
   * Connect the owner's client. `config` is the normalized config in its wire form (JSON text).
   *
   * @since 0.1.0
   * @category control plane
   */
  Open,
  /**
   * Close the client and end everything the connection started, within `budgetMs`.
   *
   * @since 0.1.0
   * @category control plane
   */
  Close,
  /**
   * Every control-plane request an owner thread serves.
   *
   * @since 0.1.0
   * @category control plane
   */
  ControlRequest,
  /**
   * The MCP methods a data-plane request may carry.
   *
   * @since 0.1.0
   * @category data plane
   */
  Method,
  /**
   * Where an owner thread answers a request it took straight from a remote thread: that thread's reply channel, and the
   * call's number there. The host is not on the way of such a request.
   *
   * @since 0.1.0
   * @category data plane
   */
  ReplyTo,
  /**
   * The span a message's work is part of, in the thread that sent it: `[traceId, spanId, sampled]`, as
   * `@effect/platform`'s Worker carries it with each request, then its trace's W3C `tracestate` and `baggage` (`""`:
   * none). Only a call made while tracing is on carries one.
   *
   * @since 0.1.0
   * @category data plane
   */
  TraceContext
} from "../internal/ownerProtocol/messages.js"

export {
  /**
   * The context to send with a message that carries `span`'s work on: its ids, and the W3C `tracestate` and `baggage`
   * its trace carries (C84) — what a message brought, an OpenTelemetry span's trace state, the OpenTelemetry context's
   * baggage.
   *
   * @since 0.1.0
   * @category data plane
   */
  traceContextOf,
  /**
   * The trace context of a fiber's current span, whatever the tracer that made it, unless tracing is turned off
   * (`Effect.withTracerEnabled(false)`); `undefined` outside any span: such a call carries nothing (C83).
   *
   * @since 0.1.0
   * @category data plane
   */
  traceContextOfFiber,
  /**
   * Whether a fiber records spans (a tracer other than Effect's default one, `Effect.withTracerEnabled` not false): only
   * then does a surface open spans of its own.
   *
   * @since 0.1.0
   * @category data plane
   */
  isTracing,
  /**
   * The external span of a message's span context, the parent of the receiving side's spans; it keeps the trace's
   * `tracestate` and `baggage` for `traceContextOf` below it.
   *
   * @since 0.1.0
   * @category data plane
   */
  externalSpanOf,
  /**
   * Runs `effect` below the current span with the `tracestate` and `baggage` of `trace`, for a request whose span's ids
   * arrived on their own (an `@effect/rpc` envelope).
   *
   * @since 0.1.0
   * @category data plane
   */
  withCarried
} from "../internal/ownerProtocol/traceContext.js"

export {
  /**
   * A call's own spill (`onTooLarge`) as it travels: a directory, or `false` (the call fails a result over the limit,
   * whatever its worker's policy).
   *
   * @since 0.1.0
   * @category data plane
   */
  Spill,
  /**
   * A request's fields, as every plane's message of a request carries them: method, params, deadline, idle budget,
   * progress, `saveTo`, spill and trace. A new request option goes here (docs/architecture.md, "One request envelope").
   *
   * @since 0.1.0
   * @category data plane
   */
  Envelope,
  /**
   * Host → owner: send one MCP request, its `Envelope` under the host's `requestId`.
   *
   * @since 0.1.0
   * @category data plane
   */
  RequestMessage,
  /**
   * Host → owner: cancel exactly this request, if it is still in flight.
   *
   * @since 0.1.0
   * @category data plane
   */
  CancelMessage,
  /**
   * The requests a server may send its client, which the host answers with its handlers.
   *
   * @since 0.1.0
   * @category data plane
   */
  ServerMethod,
  /**
   * Host → owner: the answer to a server's request, as JSON text, or the error to answer it with.
   *
   * @since 0.1.0
   * @category data plane
   */
  ServerReplyMessage,
  /**
   * Every data-plane message from the host to an owner.
   *
   * @since 0.1.0
   * @category data plane
   */
  HostMessage,
  /**
   * Owner → host: the MCP result of a request, as JSON text: the result itself, or (`envelope`) the server's
   * whole JSON-RPC response line, whose `result` it is.
   *
   * @since 0.1.0
   * @category data plane
   */
  SuccessMessage,
  /**
   * Owner → host: the requests an owner thread took straight from remote threads and answered itself, counted in
   * batches for the host's metrics (how each ended, never its data).
   *
   * @since 0.1.0
   * @category data plane
   */
  ObservedMessage,
  /**
   * One `notifications/progress` of a request in flight, as the server sent it.
   *
   * @since 0.1.0
   * @category data plane
   */
  Progress,
  /**
   * Owner → host: the server reported progress on the request in flight.
   *
   * @since 0.1.0
   * @category data plane
   */
  ProgressMessage,
  /**
   * Owner → host: the server asks the client something (`params` is JSON text); the host answers with `ServerReply`.
   *
   * @since 0.1.0
   * @category data plane
   */
  ServerRequestMessage,
  /**
   * The server notifications a worker hands on to its callers (`McpWorkers.events`): list changes, resource updates
   * and log messages. Progress and cancellation belong to their request and are handled there.
   *
   * @since 0.1.0
   * @category data plane
   */
  NotificationMethod,
  /**
   * Owner → host: the server sent a notification (`params` is its params' JSON text).
   *
   * @since 0.1.0
   * @category data plane
   */
  NotificationMessage,
  /**
   * Owner → host: a request ended with a typed failure. `WorkerBusy`: another request is in flight (the owner decides,
   * for every caller), and this one was not sent.
   *
   * @since 0.1.0
   * @category data plane
   */
  FailureMessage,
  /**
   * Owner → host: the answer to a `Cancel` that asked for one: whether the request was still in flight and is now
   * cancelled (its caller answered `DeliveryUnknown{cancelled}`), or had already ended (its answer is on its way).
   *
   * @since 0.1.0
   * @category data plane
   */
  CancelAnswerMessage,
  /**
   * Owner → host: the server process started (sent before `initialize`, so the host can always end its tree).
   *
   * @since 0.1.0
   * @category data plane
   */
  SpawnedMessage,
  /**
   * Owner → host: the connection died outside of any request.
   *
   * @since 0.1.0
   * @category data plane
   */
  FailedMessage,
  /**
   * Every data-plane message from an owner to the host.
   *
   * @since 0.1.0
   * @category data plane
   */
  OwnerMessage
} from "../internal/ownerProtocol/messages.js"

export {
  /**
   * `Schema.decodeUnknownEither` for messages from another thread or process: a value whose inspection throws (a
   * `_tag` whose `toString` is not a function, a getter that throws) is refused like any other value that does not
   * match, instead of throwing into the message handler that reads it.
   *
   * @since 0.1.0
   * @category data plane
   */
  safeDecoder,
  /**
   * A message's fast check, derived from its Schema: a predicate that accepts exactly what decoding the Schema accepts,
   * without building a parse tree, for the messages read on every call (what fails it goes through the Schema for its
   * errors). Structs, tuples, unions, literals, strings, numbers, booleans and `undefined` only; any other node throws
   * when the check is built.
   *
   * @since 0.1.0
   * @category data plane
   */
  fastCheck,
  /**
   * Validates a message that arrived at an owner.
   *
   * @since 0.1.0
   * @category data plane
   */
  decodeHostMessage,
  /**
   * Validates a message that arrived at the host.
   *
   * @since 0.1.0
   * @category data plane
   */
  decodeOwnerMessage,
  /**
   * Encodes a message for the host (tagged errors become plain data).
   *
   * @since 0.1.0
   * @category data plane
   */
  encodeOwnerMessage
} from "../internal/ownerProtocol/checks.js"

/**
 * A data-plane message from an owner to the host, as it crosses the port.
 *
 * @since 0.1.0
 * @category data plane
 */
export type OwnerMessageEncoded = typeof Messages.OwnerMessage.Encoded
