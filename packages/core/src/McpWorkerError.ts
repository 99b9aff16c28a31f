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
import * as ErrorClass from "./ErrorClass.js"
import * as Self from "./McpWorkerError.js"

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
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category models
 */
export const FailureKind = Schema.Literal(...Caller.specs.WorkerFailed.fields.kind)

/**
 * Why a connection is dead.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureKind = typeof FailureKind.Type

/**
 * Where an `open` failed.
 *
 * @since 0.1.0
 * @category models
 */
export const OpenStage = Schema.Literal(...Caller.specs.OpenFailed.fields.stage)

/**
 * Why a server's answer could not be used: a `resultType` no revision the client speaks defines, an `input_required`
 * whose requests or state are missing or malformed, a result the protocol's schema refuses, or an `input_required` that
 * asks for what no handler of the host answers (the client declared no such capability).
 *
 * @since 0.1.0
 * @category models
 */
export const UnusableReason = Schema.Literal(...Caller.specs.UnusableResult.fields.reason)

const TaggedError = ErrorClass.taggedError(CleanupSummary)

/**
 * A request is already in flight on that worker. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerBusy extends TaggedError<WorkerBusy>()("WorkerBusy") {}

/**
 * The request was sent, but its outcome is unknown: it timed out, its caller was interrupted, or it was
 * cancelled. The server may or may not have acted on it. It is never replayed.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeliveryUnknown extends TaggedError<DeliveryUnknown>()("DeliveryUnknown") {}

/**
 * The server's answer was larger than the config's `maxResultBytes`. The tool ran (its answer arrived), so the
 * outcome is `unknown` to the caller; the rest of the answer was skipped unread, and the worker stays ready.
 * `bytes` is how much had arrived when the limit was passed: the answer is at least that large.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultTooLarge extends TaggedError<ResultTooLarge>()("ResultTooLarge") {}

/**
 * The tool listing the owner reads before a call (C72) failed; `detail` says how, in words that hold no data of the
 * server's answer. The call was not sent (C95), and the worker stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreflightFailed extends TaggedError<PreflightFailed>()("PreflightFailed") {}

/**
 * The task a `taskResult` waited for ended `cancelled` or `failed` (C123): the server answered, so the outcome is
 * known (`delivered`), and there is no result. `statusMessage` is the task's, `code` the failed task's JSON-RPC error
 * code, each when the server gave one; neither holds the task's id (C71).
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskEnded extends TaggedError<TaskEnded>()("TaskEnded") {}

/**
 * A 2026-07-28 server kept answering `input_required` past the config's `maxInputRounds` retries of one call: the
 * call ends here, nothing more is sent for it, and the worker stays ready. Each round may have had effects.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRoundsExceeded extends TaggedError<InputRoundsExceeded>()("InputRoundsExceeded") {}

/**
 * The server answered, but with nothing the client can use: the call ends here, is
 * never retried, and the worker stays ready. `message` says what was wrong in words that hold no data of the answer.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnusableResult extends TaggedError<UnusableResult>()("UnusableResult") {}

/**
 * The connection is dead (transport or protocol failure, or its owner thread died). The worker stays
 * `failed` until it is closed; nothing is retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkerFailed extends TaggedError<WorkerFailed>()("WorkerFailed") {}

/**
 * The server answered with a JSON-RPC error (or a result the protocol rejects). The connection stays ready.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends TaggedError<ServerError>()("ServerError") {}

/**
 * The id never existed, was closed, or is malformed. These cases are indistinguishable on purpose.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownWorker extends TaggedError<UnknownWorker>()("UnknownWorker") {}

/**
 * A config or arguments are not JSON plain data, or not a valid config. Nothing was sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends TaggedError<InvalidInput>()("InvalidInput") {}

/**
 * The worker could not be started; no thread and no process of the attempt is left.
 *
 * @since 0.1.0
 * @category errors
 */
export class OpenFailed extends TaggedError<OpenFailed>()("OpenFailed") {}

/**
 * Cleanup could not be confirmed. The id and its owner are kept so `close` can be called again.
 *
 * @since 0.1.0
 * @category errors
 */
export class CloseFailed extends TaggedError<CloseFailed>()("CloseFailed") {}

/**
 * `cancel` named a request that is not the one in flight on that worker. The current request is untouched.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestNotPending extends TaggedError<RequestNotPending>()("RequestNotPending") {}

/**
 * A remote thread's request was not taken by any host registry (`NodeMcpWorkers.layer()`): none runs in this
 * process, it has closed, or its event loop was blocked past the time by which it had to acknowledge the request.
 * In every case the request was not sent, and a host that reads it later refuses it.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostUnavailable extends TaggedError<HostUnavailable>()("HostUnavailable") {}

/**
 * The request's deadline had passed before it could be sent (a caller's budget spent waiting for a blocked thread,
 * or a zero timeout): it was not sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class DeadlineExceeded extends TaggedError<DeadlineExceeded>()("DeadlineExceeded") {}

/**
 * Every failure a request (`listTools`, `callTool`) can end with.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestError = typeof RequestError.Type

// The tags come from the caller's record (`specs`); each tag's class is this module's export of that name.
const unionOf = <T extends Caller.Tag>(tags: ReadonlyArray<T>) =>
  Schema.Union(...tags.map((tag) => Self[tag])) as Schema.Union<ReadonlyArray<(typeof Self)[T]>>

/**
 * The schema of every failure a request can end with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequestError = unionOf(Caller.requestTags)

/**
 * Every tagged error of mcp-worker, for decoding errors that crossed a thread.
 *
 * @since 0.1.0
 * @category schemas
 */
export const McpWorkerError = unionOf(Caller.tags)

/**
 * Any tagged error of mcp-worker.
 *
 * @since 0.1.0
 * @category models
 */
export type McpWorkerError = typeof McpWorkerError.Type

// The Effect 3 face's own, below: the Effect 4 face's module is this one above this line.

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
  return new (Self[error._tag] as new (fields: never) => McpWorkerError)(fields as never)
}

/**
 * A caller check's answer as an `Either`, its `InvalidInput` this package's.
 *
 * @since 0.1.0
 * @category constructors
 */
export const eitherOf = <A>(checked: Caller.Checked<A>): Either.Either<A, InvalidInput> =>
  checked.ok ? Either.right(checked.value) : Either.left(fromCaller(checked.error) as InvalidInput)
