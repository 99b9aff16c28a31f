/**
 * The typed failures of mcp-worker. Each one is a `Schema.TaggedError` because it crosses threads, and each
 * says honestly whether the request reached the server (`delivery`).
 *
 * Messages are built from ids, stages and kinds only: never from configs, arguments or results.
 *
 * @since 0.1.0
 */
import * as Caller from "@mcp-worker/caller/McpWorkerError"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorStack from "./ErrorStack.js"

// C103: a class and `@mcp-worker/caller`'s class of the same tag accept each other's instances.
const TaggedError =
  <Self = never>(identifier: string) =>
  <Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
    Caller.withSharedInstances(ErrorStack.readable(Schema.TaggedError<Self>(identifier)(tag, fields)), tag)

const { messages } = Caller

// `delivery: "not_sent"` for errors that can only mean it: given by the constructor, carried across threads.
const notSent = Schema.Literal("not_sent").pipe(
  Schema.propertySignature,
  Schema.withConstructorDefault(() => "not_sent" as const)
)

// C116: an error that can only mean `unknown` unless told otherwise, given by the constructor.
const unknownDelivery = Schema.Literal("unknown").pipe(
  Schema.propertySignature,
  Schema.withConstructorDefault(() => "unknown" as const)
)

/**
 * What `close` found when it ended the connection.
 *
 * @since 0.1.0
 * @category models
 */
export const CleanupSummary = Schema.Struct({
  activeProcesses: Schema.Number,
  signalled: Schema.Struct({ term: Schema.Number, kill: Schema.Number }),
  escaped: Schema.Number,
  durationMs: Schema.Number,
  sessionTerminated: Schema.NullOr(Schema.Boolean)
})

/**
 * What `close` found when it ended the connection.
 *
 * @since 0.1.0
 * @category models
 */
export type CleanupSummary = typeof CleanupSummary.Type

/**
 * The summary of a close that had nothing to end.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyCleanup: CleanupSummary = {
  activeProcesses: 0,
  signalled: { term: 0, kill: 0 },
  escaped: 0,
  durationMs: 0,
  sessionTerminated: null
}

/**
 * A request is already in flight on that worker. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerBusy extends TaggedError<WorkerBusy>("@mcp-worker/core/WorkerBusy")("WorkerBusy", {
  workerId: Schema.String,
  requestId: Schema.String,
  delivery: Schema.Literal("not_sent")
}) {
  override get message(): string {
    return messages.WorkerBusy(this)
  }
}

/**
 * The request was sent, but its outcome is unknown: it timed out, its caller was interrupted, or it was
 * cancelled. The server may or may not have acted on it. It is never replayed.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeliveryUnknown extends TaggedError<DeliveryUnknown>("@mcp-worker/core/DeliveryUnknown")(
  "DeliveryUnknown",
  {
    workerId: Schema.String,
    requestId: Schema.String,
    reason: Schema.Literal(
      "timeout",
      "interrupted",
      "cancelled",
      "host_unresponsive",
      "connection_lost",
      "stream_broken"
    ),
    delivery: Schema.Literal("unknown")
  }
) {
  override get message(): string {
    return messages.DeliveryUnknown(this)
  }
}

/**
 * The server's answer was larger than the config's `maxResultBytes`. The tool ran (its answer arrived), so the
 * outcome is `unknown` to the caller; the rest of the answer was skipped unread, and the worker stays ready.
 * `bytes` is how much had arrived when the limit was passed: the answer is at least that large.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultTooLarge extends TaggedError<ResultTooLarge>("@mcp-worker/core/ResultTooLarge")("ResultTooLarge", {
  workerId: Schema.String,
  requestId: Schema.String,
  bytes: Schema.Number,
  limit: Schema.Number,
  delivery: Schema.Literal("unknown"),
  /** Which bound it passed: the config's `maxResultBytes` (absent), or a listener's frame limit (`frame`). */
  bound: Schema.optional(Schema.Literal("frame")),
  /** Why the result was not spilled although the call asked for it (`onTooLarge`): its file could not be written. */
  spillFailed: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return messages.ResultTooLarge(this)
  }
}

/**
 * The tool listing the owner reads before a call (C72) failed; `detail` says how, in words that hold no data of the
 * server's answer. The call was not sent (C95), and the worker stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreflightFailed extends TaggedError<PreflightFailed>("@mcp-worker/core/PreflightFailed")(
  "PreflightFailed",
  {
    workerId: Schema.String,
    requestId: Schema.String,
    method: Schema.Literal("tools/list"),
    detail: Schema.String,
    delivery: notSent
  }
) {
  override get message(): string {
    return messages.PreflightFailed(this)
  }
}

/**
 * The task a `taskResult` waited for ended `cancelled` or `failed` (C123): the server answered, so the outcome is
 * known (`delivered`), and there is no result. `statusMessage` is the task's, `code` the failed task's JSON-RPC error
 * code, each when the server gave one; neither holds the task's id (C71).
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskEnded extends TaggedError<TaskEnded>("@mcp-worker/core/TaskEnded")("TaskEnded", {
  workerId: Schema.String,
  requestId: Schema.String,
  state: Schema.Literal("cancelled", "failed"),
  statusMessage: Schema.optional(Schema.String),
  code: Schema.optional(Schema.Number),
  delivery: Schema.Literal("delivered").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "delivered" as const)
  )
}) {
  override get message(): string {
    return messages.TaskEnded(this)
  }
}

/**
 * A 2026-07-28 server kept answering `input_required` past the config's `maxInputRounds` retries of one call: the
 * call ends here, nothing more is sent for it, and the worker stays ready. Each round may have had effects.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRoundsExceeded extends TaggedError<InputRoundsExceeded>("@mcp-worker/core/InputRoundsExceeded")(
  "InputRoundsExceeded",
  {
    workerId: Schema.String,
    requestId: Schema.String,
    rounds: Schema.Number,
    delivery: Schema.Literal("unknown")
  }
) {
  override get message(): string {
    return messages.InputRoundsExceeded(this)
  }
}

/**
 * Why a server's answer could not be used: a `resultType` no revision the client speaks defines, an `input_required`
 * whose requests or state are missing or malformed, a result the protocol's schema refuses, or an `input_required` that
 * asks for what no handler of the host answers (the client declared no such capability).
 *
 * @since 0.1.0
 * @category models
 */
export const UnusableReason = Schema.Literal(
  "unknown_result_type",
  "malformed_input_required",
  "invalid_result",
  "no_handler"
)

/**
 * The server answered, but with nothing the client can use: the call ends here, is
 * never retried, and the worker stays ready. `message` says what was wrong in words that hold no data of the answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnusableResult extends TaggedError<UnusableResult>("@mcp-worker/core/UnusableResult")("UnusableResult", {
  workerId: Schema.String,
  requestId: Schema.String,
  reason: UnusableReason,
  detail: Schema.String,
  delivery: Schema.Literal("unknown")
}) {
  override get message(): string {
    return messages.UnusableResult(this)
  }
}

/**
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category models
 */
export const FailureKind = Schema.Literal(
  "transport",
  "protocol",
  "thread",
  "closing",
  "session_expired",
  "unauthorized"
)

/**
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureKind = typeof FailureKind.Type

/**
 * The connection is dead (transport or protocol failure, or its owner thread died). The worker stays
 * `failed` until it is closed; nothing is retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerFailed extends TaggedError<WorkerFailed>("@mcp-worker/core/WorkerFailed")("WorkerFailed", {
  workerId: Schema.String,
  kind: FailureKind,
  message: Schema.String,
  delivery: Schema.Literal("not_sent", "unknown")
}) {}

/**
 * The server answered with a JSON-RPC error (or a result the protocol rejects). The connection stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends TaggedError<ServerError>("@mcp-worker/core/ServerError")("ServerError", {
  workerId: Schema.String,
  requestId: Schema.String,
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown),
  /** C116: `delivered` — the server received the request and answered it; `unknown` when the client failed it. */
  delivery: Schema.Literal("delivered", "unknown").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "delivered" as const)
  )
}) {}

/**
 * The id never existed, was closed, or is malformed. These cases are indistinguishable on purpose.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownWorker extends TaggedError<UnknownWorker>("@mcp-worker/core/UnknownWorker")("UnknownWorker", {
  workerId: Schema.String,
  delivery: notSent
}) {
  override get message(): string {
    return messages.UnknownWorker(this)
  }
}

/**
 * A config or arguments are not JSON plain data, or not a valid config. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends TaggedError<InvalidInput>("@mcp-worker/core/InvalidInput")("InvalidInput", {
  where: Schema.Literal("config", "arguments"),
  path: Schema.String,
  message: Schema.String,
  delivery: Schema.Literal("not_sent")
}) {}

/**
 * Where an `open` failed.
 *
 * @since 0.1.0
 * @category models
 */
export const OpenStage = Schema.Literal("thread", "spawn", "connect", "authorization", "initialize", "timeout")

/**
 * The worker could not be started; no thread and no process of the attempt is left.
 *
 * @since 0.1.0
 * @category errors
 */
export class OpenFailed extends TaggedError<OpenFailed>("@mcp-worker/core/OpenFailed")("OpenFailed", {
  stage: OpenStage,
  message: Schema.String,
  exitCode: Schema.optional(Schema.Number),
  signal: Schema.optional(Schema.String),
  stderrTail: Schema.optional(Schema.String),
  // C116: `not_sent` when no server process started; past that its `initialize` may have reached it.
  delivery: Schema.Literal("not_sent", "unknown").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "unknown" as const)
  )
}) {}

/**
 * Cleanup could not be confirmed. The id and its owner are kept so `close` can be called again.
 *
 * @since 0.1.0
 * @category errors
 */
export class CloseFailed extends TaggedError<CloseFailed>("@mcp-worker/core/CloseFailed")("CloseFailed", {
  workerId: Schema.String,
  message: Schema.String,
  cleanup: CleanupSummary,
  // C116: the close ran as far as it could; what of the server it ended is unconfirmed.
  delivery: unknownDelivery
}) {}

/**
 * `cancel` named a request that is not the one in flight on that worker. The current request is untouched.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends TaggedError<RequestNotPending>("@mcp-worker/core/RequestNotPending")(
  "RequestNotPending",
  // C116: the cancel sent nothing; the request in flight is untouched.
  { workerId: Schema.String, requestId: Schema.String, delivery: notSent }
) {
  override get message(): string {
    return messages.RequestNotPending(this)
  }
}

/**
 * A remote thread's request was not taken by any host registry (`NodeMcpWorkers.layer()`): none runs in this
 * process, it has closed, or its event loop was blocked past the time by which it had to acknowledge the request.
 * In every case the request was not sent, and a host that reads it later refuses it.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostUnavailable extends TaggedError<HostUnavailable>("@mcp-worker/core/HostUnavailable")(
  "HostUnavailable",
  { message: Schema.String, delivery: notSent }
) {}

/**
 * The request's deadline had passed before it could be sent (a caller's budget spent waiting for a blocked thread,
 * or a zero timeout): it was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeadlineExceeded extends TaggedError<DeadlineExceeded>("@mcp-worker/core/DeadlineExceeded")(
  "DeadlineExceeded",
  { workerId: Schema.String, delivery: Schema.Literal("not_sent") }
) {
  override get message(): string {
    return messages.DeadlineExceeded(this)
  }
}

/**
 * Every failure a request (`listTools`, `callTool`) can end with.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestError = typeof RequestError.Type

/**
 * The schema of every failure a request can end with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequestError = Schema.Union(
  UnknownWorker,
  WorkerBusy,
  WorkerFailed,
  DeliveryUnknown,
  ServerError,
  InvalidInput,
  HostUnavailable,
  ResultTooLarge,
  DeadlineExceeded,
  InputRoundsExceeded,
  UnusableResult,
  PreflightFailed,
  TaskEnded
)

/**
 * Every tagged error of mcp-worker, for decoding errors that crossed a thread.
 *
 * @since 0.1.0
 * @category schemas
 */
export const McpWorkerError = Schema.Union(
  UnknownWorker,
  WorkerBusy,
  WorkerFailed,
  DeliveryUnknown,
  ServerError,
  InvalidInput,
  OpenFailed,
  CloseFailed,
  RequestNotPending,
  HostUnavailable,
  ResultTooLarge,
  DeadlineExceeded,
  InputRoundsExceeded,
  UnusableResult,
  PreflightFailed,
  TaskEnded
)

/**
 * Any tagged error of mcp-worker.
 *
 * @since 0.1.0
 * @category models
 */
export type McpWorkerError = typeof McpWorkerError.Type

const classes: { readonly [tag: string]: new (fields: never) => McpWorkerError } = Object.fromEntries(
  McpWorkerError.members.map((member) => [member._tag, member])
)

/**
 * This package's error for an error of `@mcp-worker/caller` (the same tag and fields), so that an Effect program
 * over a caller's plane fails with the classes of the union.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCaller = (error: Caller.McpWorkerError): McpWorkerError => {
  const spec: Caller.ErrorSpec = Caller.specs[error._tag]
  const fields = Object.fromEntries(
    Object.keys(spec.fields).flatMap((name) => {
      const value = (error as unknown as Record<string, unknown>)[name]
      return value === undefined ? [] : [[name, value]]
    })
  )
  return new classes[error._tag]!(fields as never)
}

/**
 * A caller check's answer as an `Either`, its `InvalidInput` this package's.
 *
 * @since 0.1.0
 * @category constructors
 */
export const eitherOf = <A>(checked: Caller.Checked<A>): Either.Either<A, InvalidInput> =>
  checked.ok ? Either.right(checked.value) : Either.left(fromCaller(checked.error) as InvalidInput)
