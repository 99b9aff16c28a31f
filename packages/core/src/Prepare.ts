/**
 * A caller's request, checked once for every surface: its arguments as the operation's params, its `timeout` as a
 * budget, where its result goes. Every surface — the host, a remote thread, the socket client, `McpClient`, a
 * cluster's caller — calls `prepare` in the calling thread before anything is sent, so the same bad input is the same
 * `InvalidInput`, naming the same path, wherever it is made (C16).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { InvalidInput } from "./McpWorkerError.js"
import type * as Operations from "./Operations.js"
import { maxTimeoutMs } from "./ServerConfig.js"

// Duration reads negative durations ("-5 millis", [-1, 0], -1n) as zero, like NaN and negative numbers: refused
// before they become "no time at all".
const isNegative = (input: unknown): boolean =>
  typeof input === "number"
    ? !(input >= 0)
    : typeof input === "bigint"
      ? input < 0n
      : typeof input === "string"
        ? input.trimStart().startsWith("-")
        : Array.isArray(input) && input.some((part) => typeof part === "number" && !(part >= 0))

/**
 * A caller's budget in milliseconds, or `undefined` when none was given. Durations beyond what a timer can hold
 * (`Duration.infinity` included) are clamped to the longest timer; anything that is not a duration, or is negative,
 * is refused, with the reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const budgetOf = (input: unknown): Either.Either<number | undefined, string> => {
  if (input === undefined) return Either.right(undefined)
  if (isNegative(input)) return Either.left("the timeout must be a non-negative duration")
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left("the timeout is not a duration")
  const ms = Duration.toMillis(decoded.value)
  if (Number.isNaN(ms) || ms < 0) return Either.left("the timeout must be a non-negative duration")
  return Either.right(Math.min(ms, maxTimeoutMs))
}

/**
 * The `InvalidInput` of a `timeout` that `budgetOf` refused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidTimeout = (where: "config" | "arguments", message: string): InvalidInput =>
  new InvalidInput({ where, path: "options.timeout", message, delivery: "not_sent" })

/**
 * Which id an operation was given: the worker's (or the grant that stands for it), or a request's (`cancel`).
 *
 * @since 0.1.0
 * @category models
 */
export type IdPath = "workerId" | "requestId"

/**
 * An id as the caller gave it: any string is looked up (an unknown one is `UnknownWorker`); anything else — the
 * `undefined` of an `openAll` entry that failed — is refused at once, unsent, naming the argument (C94).
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkId = (input: unknown, path: IdPath): Either.Either<string, InvalidInput> =>
  typeof input === "string"
    ? Either.right(input)
    : Either.left(
        new InvalidInput({
          where: "arguments",
          path,
          message: `the ${path === "workerId" ? "worker" : "request"} id must be a string, not ${describe(input)}`,
          delivery: "not_sent"
        })
      )

/**
 * Runs `f` with the id once `checkId` has passed it; else fails with its `InvalidInput`, before any lookup.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withId = <A, E, R>(
  id: unknown,
  path: IdPath,
  f: (id: string) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | InvalidInput, R> =>
  Either.match(checkId(id, path), { onLeft: (invalid) => Effect.fail(invalid), onRight: f })

const describe = (input: unknown): string =>
  input === null ? "null" : Array.isArray(input) ? "an array" : typeof input

/**
 * A request as every surface hands it on: its params as JSON text, the caller's budget (`undefined`: the worker's
 * default), and where its result goes (`saveTo`, `spill`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prepared {
  readonly params: string
  readonly budgetMs: number | undefined
  readonly saveTo: string | undefined
  readonly spill: string | false | undefined
}

/**
 * A caller's arguments and options, checked in one order — the arguments, the `timeout`, `saveTo`, `onTooLarge` — with
 * the surface's `context` (what it can check, and what it refuses). Nothing is sent before this passes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepare = (
  operation: Operations.Any,
  args: ReadonlyArray<unknown>,
  options: Operations.CallToolOptions | undefined,
  context: Operations.ParamsContext
): Either.Either<Prepared, InvalidInput> => {
  const params = operation.params(args, options, context)
  if (Either.isLeft(params)) return Either.left(params.left)
  const budget = budgetOf(options?.timeout)
  if (Either.isLeft(budget)) return Either.left(invalidTimeout("arguments", budget.left))
  const saveTo = operation.saveTo === undefined ? Either.right(undefined) : operation.saveTo(options, context)
  if (Either.isLeft(saveTo)) return Either.left(saveTo.left)
  const spill = operation.spill === undefined ? Either.right(undefined) : operation.spill(options, context)
  if (Either.isLeft(spill)) return Either.left(spill.left)
  return Either.right({ params: params.right, budgetMs: budget.right, saveTo: saveTo.right, spill: spill.right })
}

/**
 * `prepare` for a request to a worker by id: the id first, then the rest. Every surface that takes a worker id (or a
 * grant in its place) calls this one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepareFor = (
  operation: Operations.Any,
  id: unknown,
  args: ReadonlyArray<unknown>,
  options: Operations.CallToolOptions | undefined,
  context: Operations.ParamsContext
): Either.Either<Prepared & { readonly workerId: string }, InvalidInput> =>
  Either.flatMap(checkId(id, "workerId"), (workerId) =>
    Either.map(prepare(operation, args, options, context), (prepared) => ({ ...prepared, workerId }))
  )
