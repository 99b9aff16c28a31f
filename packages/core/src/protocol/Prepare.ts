/**
 * A caller's request, checked once for every surface: its arguments as the operation's params, its `timeout` as a
 * budget, where its result goes. Every surface — the host, a remote thread, the socket client, `McpClient`, a
 * cluster's caller — calls `prepare` in the calling thread before anything is sent, so the same bad input is the same
 * `InvalidInput`, naming the same path, wherever it is made (C16). The checks are `@mcp-worker/caller/Operations`'s,
 * which a caller without Effect runs too (C104); here they answer `Either`s.
 *
 * @since 0.1.0
 */
import * as Caller from "@mcp-worker/caller/Operations"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { eitherOf, fromCaller, type InvalidInput } from "../McpWorkerError.js"
import type * as Operations from "../Operations.js"

/**
 * A caller's budget in milliseconds, or `undefined` when none was given. Durations beyond what a timer can hold
 * (`Duration.infinity` included) are clamped to the longest timer; anything that is not a duration, or is negative,
 * is refused, with the reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const budgetOf = (input: unknown): Either.Either<number | undefined, string> => {
  const budget = Caller.budgetOf(input)
  return budget.ok ? Either.right(budget.value) : Either.left(budget.reason)
}

/**
 * The `InvalidInput` of a `timeout` that `budgetOf` refused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidTimeout = (where: "config" | "arguments", message: string): InvalidInput =>
  fromCaller(Caller.invalidTimeout(where, message)) as InvalidInput

/**
 * Which id an operation was given: the worker's (or the grant that stands for it), or a request's (`cancel`).
 *
 * @since 0.1.0
 * @category models
 */
export type IdPath = Caller.IdPath

/**
 * An id as the caller gave it: any string is looked up (an unknown one is `UnknownWorker`); anything else — the
 * `undefined` of an `openAll` entry that failed — is refused at once, unsent, naming the argument (C94).
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkId = (input: unknown, path: IdPath): Either.Either<string, InvalidInput> =>
  eitherOf(Caller.checkId(input, path))

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

/**
 * A request as every surface hands it on: its params as JSON text, the caller's budget (`undefined`: the worker's
 * default), and where its result goes (`saveTo`, `spill`).
 *
 * @since 0.1.0
 * @category models
 */
export type Prepared = Caller.Prepared

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
): Either.Either<Prepared, InvalidInput> => eitherOf(Caller.prepare(operation, args, options, context))

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
  eitherOf(Caller.prepareFor(operation, id, args, options, context))
