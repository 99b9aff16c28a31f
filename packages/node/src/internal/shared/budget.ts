/**
 * Callers' time budgets: what a `timeout` option may be (`Prepare.budgetOf`), and how much of one is left.
 */
import * as Prepare from "@mcp-worker/core/Prepare"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/**
 * A caller's budget in milliseconds, or `undefined` when none was given: the one rule of every surface
 * (`Prepare.budgetOf`).
 *
 * @internal
 */
export const budgetOf: (input: Duration.DurationInput | undefined) => Either.Either<number | undefined, string> =
  Prepare.budgetOf

/** @internal */
export const invalidTimeout = Prepare.invalidTimeout

/**
 * A budget being spent, as the `Clock` service tells time. Only for budgets that stay on one thread: a deadline
 * handed to another thread is a `Date.now()` instant (the thread plane's messages), the one clock all threads share.
 *
 * @internal
 */
export interface Running {
  readonly budgetMs: number
  readonly startedMs: number
}

/** Starts spending `budgetMs` now. @internal */
export const start = (budgetMs: number): Effect.Effect<Running> =>
  Effect.map(Clock.currentTimeMillis, (startedMs) => ({ budgetMs, startedMs }))

/** The milliseconds spent since the budget started. @internal */
export const elapsed = (running: Running): Effect.Effect<number> =>
  Effect.map(Clock.currentTimeMillis, (now) => now - running.startedMs)

/**
 * The milliseconds left, never below 1: what is left becomes the timeout of the next step, and a spent budget must
 * still bound that step rather than read as no time at all.
 *
 * @internal
 */
export const left = (running: Running): Effect.Effect<number> =>
  Effect.map(elapsed(running), (spent) => Math.max(1, running.budgetMs - spent))
