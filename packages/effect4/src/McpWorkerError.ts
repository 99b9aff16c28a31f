/**
 * The typed failures of mcp-worker as Effect 4 tagged errors: the same tags, fields, literals and messages as
 * `@mcp-worker/core`'s (a test walks core's union and compares every schema of this module with it, C69), so
 * `Effect.catchTag("WorkerBusy", …)` reads as it does on Effect 3. Each says whether the request reached the server
 * (`delivery`). Messages are built from ids, stages and kinds only: never from configs, arguments or results.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ErrorStack from "./ErrorStack.js"

// `delivery: "not_sent"` for errors that can only mean it: given by the constructor.
const notSent = Schema.Literal("not_sent").pipe(Schema.withConstructorDefault(Effect.succeed("not_sent" as const)))

// C116: errors that mean `unknown` unless told otherwise, given by the constructor.
const unknownDelivery = Schema.Literal("unknown").pipe(
  Schema.withConstructorDefault(Effect.succeed("unknown" as const))
)

/**
 * What `close` found when it ended the connection.
 *
 * @since 0.1.0
 * @category schemas
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
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FailureKind = Schema.Literals([
  "transport",
  "protocol",
  "thread",
  "closing",
  "session_expired",
  "unauthorized"
])

/**
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureKind = typeof FailureKind.Type

/**
 * A request is already in flight on that worker. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerBusy extends ErrorStack.readable(
  Schema.TaggedError<WorkerBusy>("@mcp-worker/core/WorkerBusy")("WorkerBusy", {
    workerId: Schema.String,
    requestId: Schema.String,
    delivery: Schema.Literal("not_sent")
  })
) {
  override get message(): string {
    return `worker ${this.workerId} is busy with request ${this.requestId}; nothing was sent`
  }
}

/**
 * The request was sent, but its outcome is unknown: it timed out, its caller was interrupted, or it was cancelled.
 * The server may or may not have acted on it. It is never replayed.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeliveryUnknown extends ErrorStack.readable(
  Schema.TaggedError<DeliveryUnknown>("@mcp-worker/core/DeliveryUnknown")("DeliveryUnknown", {
    workerId: Schema.String,
    requestId: Schema.String,
    reason: Schema.Literals([
      "timeout",
      "interrupted",
      "cancelled",
      "host_unresponsive",
      "connection_lost",
      "stream_broken"
    ]),
    delivery: Schema.Literal("unknown")
  })
) {
  override get message(): string {
    const request = this.requestId === "" ? "a request" : `request ${this.requestId}`
    const why =
      this.reason === "host_unresponsive"
        ? "the mcp-worker host stopped answering"
        : this.reason === "connection_lost"
          ? "the connection to the mcp-worker host was lost"
          : this.reason === "stream_broken"
            ? "its response stream broke before the result; it was not sent again"
            : this.reason
    return `${request} on worker ${this.workerId} ended (${why}); it may have reached the server, and its outcome is unknown`
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
export class ResultTooLarge extends ErrorStack.readable(
  Schema.TaggedError<ResultTooLarge>("@mcp-worker/core/ResultTooLarge")("ResultTooLarge", {
    workerId: Schema.String,
    requestId: Schema.String,
    bytes: Schema.Number,
    limit: Schema.Number,
    delivery: Schema.Literal("unknown"),
    /** Which bound it passed: the config's `maxResultBytes` (absent), or a listener's frame limit (`frame`). */
    bound: Schema.optional(Schema.Literal("frame")),
    /** Why the result was not spilled although the call asked for it (`onTooLarge`): its file could not be written. */
    spillFailed: Schema.optional(Schema.String)
  })
) {
  override get message(): string {
    if (this.bound === "frame") {
      return (
        `the answer to request ${this.requestId} on worker ${this.workerId} passed the listener's frame limit ` +
        `(${this.bytes} > ${this.limit} bytes); the request ran and its outcome is unknown (saveTo writes any size)`
      )
    }
    if (this.spillFailed !== undefined) {
      return (
        `the answer to request ${this.requestId} on worker ${this.workerId} passed maxResultBytes ` +
        `(${this.bytes} > ${this.limit} bytes) and could not be spilled (${this.spillFailed}); nothing of it is ` +
        `left, the request ran and its outcome is unknown`
      )
    }
    return (
      `the answer to request ${this.requestId} on worker ${this.workerId} passed maxResultBytes ` +
      `(${this.bytes} > ${this.limit} bytes); it was skipped unread, the request ran and its outcome is unknown`
    )
  }
}

/**
 * The tool listing the owner reads before a call (C72) failed; `detail` says how, in words that hold no data of the
 * server's answer. The call was not sent (C95), and the worker stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreflightFailed extends ErrorStack.readable(
  Schema.TaggedError<PreflightFailed>("@mcp-worker/core/PreflightFailed")("PreflightFailed", {
    workerId: Schema.String,
    requestId: Schema.String,
    method: Schema.Literal("tools/list"),
    detail: Schema.String,
    delivery: notSent
  })
) {
  override get message(): string {
    return (
      `request ${this.requestId} on worker ${this.workerId} was not sent: the ${this.method} the owner sends first, ` +
      `to learn which tools run only as tasks, failed (${this.detail})`
    )
  }
}

/**
 * The task a `taskResult` waited for ended `cancelled` or `failed` (C123): the server answered, so the outcome is
 * known (`delivered`), and there is no result. `statusMessage` is the task's, `code` the failed task's JSON-RPC error
 * code, each when the server gave one.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskEnded extends ErrorStack.readable(
  Schema.TaggedError<TaskEnded>("@mcp-worker/core/TaskEnded")("TaskEnded", {
    workerId: Schema.String,
    requestId: Schema.String,
    state: Schema.Literals(["cancelled", "failed"]),
    statusMessage: Schema.optional(Schema.String),
    code: Schema.optional(Schema.Number),
    delivery: Schema.Literal("delivered").pipe(Schema.withConstructorDefault(Effect.succeed("delivered" as const)))
  })
) {
  override get message(): string {
    return (
      `the task awaited by request ${this.requestId} on worker ${this.workerId} ended ${this.state}` +
      `${this.code === undefined ? "" : ` (error ${this.code})`}: it has no result`
    )
  }
}

/**
 * A 2026-07-28 server kept answering `input_required` past the config's `maxInputRounds` retries of one call: the
 * call ends here, nothing more is sent for it, and the worker stays ready. Each round may have had effects.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRoundsExceeded extends ErrorStack.readable(
  Schema.TaggedError<InputRoundsExceeded>("@mcp-worker/core/InputRoundsExceeded")("InputRoundsExceeded", {
    workerId: Schema.String,
    requestId: Schema.String,
    rounds: Schema.Number,
    delivery: Schema.Literal("unknown")
  })
) {
  override get message(): string {
    return (
      `request ${this.requestId} on worker ${this.workerId} still asked for input after ${this.rounds} rounds ` +
      "(maxInputRounds); it was stopped and not sent again, its outcome is unknown"
    )
  }
}

/**
 * Why a server's answer could not be used: a `resultType` no revision the client speaks defines, an `input_required`
 * whose requests or state are missing or malformed, a result the protocol's schema refuses, or an `input_required` that
 * asks for what no handler of the host answers.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnusableReason = Schema.Literals([
  "unknown_result_type",
  "malformed_input_required",
  "invalid_result",
  "no_handler"
])

/**
 * The server answered, but with nothing the client can use: the call ends here, is never retried, and the worker
 * stays ready. `message` says what was wrong in words that hold no data of the answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnusableResult extends ErrorStack.readable(
  Schema.TaggedError<UnusableResult>("@mcp-worker/core/UnusableResult")("UnusableResult", {
    workerId: Schema.String,
    requestId: Schema.String,
    reason: UnusableReason,
    detail: Schema.String,
    delivery: Schema.Literal("unknown")
  })
) {
  override get message(): string {
    return `the answer to request ${this.requestId} on worker ${this.workerId} cannot be used (${this.reason}): ${this.detail}`
  }
}

/**
 * The connection is dead (transport or protocol failure, or its owner died). The worker stays `failed` until it is
 * closed; nothing is retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerFailed extends ErrorStack.readable(
  Schema.TaggedError<WorkerFailed>("@mcp-worker/core/WorkerFailed")("WorkerFailed", {
    workerId: Schema.String,
    kind: FailureKind,
    message: Schema.String,
    delivery: Schema.Literals(["not_sent", "unknown"])
  })
) {}

/**
 * The server answered with a JSON-RPC error. The connection stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends ErrorStack.readable(
  Schema.TaggedError<ServerError>("@mcp-worker/core/ServerError")("ServerError", {
    workerId: Schema.String,
    requestId: Schema.String,
    code: Schema.Number,
    message: Schema.String,
    data: Schema.optional(Schema.Unknown),
    delivery: Schema.Literals(["delivered", "unknown"]).pipe(
      Schema.withConstructorDefault(Effect.succeed("delivered" as const))
    )
  })
) {}

/**
 * The id never existed, was closed, or is malformed. These cases are indistinguishable on purpose.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownWorker extends ErrorStack.readable(
  Schema.TaggedError<UnknownWorker>("@mcp-worker/core/UnknownWorker")("UnknownWorker", {
    workerId: Schema.String,
    delivery: notSent
  })
) {
  override get message(): string {
    return `no open worker has the id ${JSON.stringify(this.workerId.slice(0, 64))}`
  }
}

/**
 * A config or arguments are not JSON plain data, or not a valid config. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends ErrorStack.readable(
  Schema.TaggedError<InvalidInput>("@mcp-worker/core/InvalidInput")("InvalidInput", {
    where: Schema.Literals(["config", "arguments"]),
    path: Schema.String,
    message: Schema.String,
    delivery: Schema.Literal("not_sent")
  })
) {}

/**
 * Where an `open` failed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OpenStage = Schema.Literals(["thread", "spawn", "connect", "authorization", "initialize", "timeout"])

/**
 * The worker could not be started; no thread and no process of the attempt is left.
 *
 * @since 0.1.0
 * @category errors
 */
export class OpenFailed extends ErrorStack.readable(
  Schema.TaggedError<OpenFailed>("@mcp-worker/core/OpenFailed")("OpenFailed", {
    stage: OpenStage,
    message: Schema.String,
    exitCode: Schema.optional(Schema.Number),
    signal: Schema.optional(Schema.String),
    stderrTail: Schema.optional(Schema.String),
    delivery: Schema.Literals(["not_sent", "unknown"]).pipe(
      Schema.withConstructorDefault(Effect.succeed("unknown" as const))
    )
  })
) {}

/**
 * Cleanup could not be confirmed. The id and its owner are kept so `close` can be called again.
 *
 * @since 0.1.0
 * @category errors
 */
export class CloseFailed extends ErrorStack.readable(
  Schema.TaggedError<CloseFailed>("@mcp-worker/core/CloseFailed")("CloseFailed", {
    workerId: Schema.String,
    message: Schema.String,
    cleanup: CleanupSummary,
    delivery: unknownDelivery
  })
) {}

/**
 * `cancel` named a request that is not the one in flight on that worker. The current request is untouched.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends ErrorStack.readable(
  Schema.TaggedError<RequestNotPending>("@mcp-worker/core/RequestNotPending")("RequestNotPending", {
    workerId: Schema.String,
    requestId: Schema.String,
    delivery: notSent
  })
) {
  override get message(): string {
    return `request ${JSON.stringify(this.requestId.slice(0, 64))} is not in flight on worker ${this.workerId}`
  }
}

/**
 * A remote thread's request was taken by no host registry: none runs in this process, it has closed, or it was
 * blocked past the time by which it had to acknowledge the request. The request was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostUnavailable extends ErrorStack.readable(
  Schema.TaggedError<HostUnavailable>("@mcp-worker/core/HostUnavailable")("HostUnavailable", {
    message: Schema.String,
    delivery: notSent
  })
) {}

/**
 * The request's deadline had passed before it could be sent: it was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeadlineExceeded extends ErrorStack.readable(
  Schema.TaggedError<DeadlineExceeded>("@mcp-worker/core/DeadlineExceeded")("DeadlineExceeded", {
    workerId: Schema.String,
    delivery: Schema.Literal("not_sent")
  })
) {
  override get message(): string {
    return `the deadline of a request on worker ${this.workerId} passed before it could be sent; nothing was sent`
  }
}

/**
 * Every failure a request (`listTools`, `callTool`, …) can end with.
 *
 * @since 0.1.0
 * @category models
 */
/**
 * The schema of every failure a request can end with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequestError = Schema.Union([
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
])

/**
 * Every failure a request (`listTools`, `callTool`, …) can end with.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestError = typeof RequestError.Type

/**
 * Every tagged error of mcp-worker.
 *
 * @since 0.1.0
 * @category schemas
 */
export const McpWorkerError = Schema.Union([
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
])

/**
 * Any tagged error of mcp-worker.
 *
 * @since 0.1.0
 * @category models
 */
export type McpWorkerError = typeof McpWorkerError.Type
