import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** @internal */
export const budgetOf: (input: Duration.DurationInput | undefined) => Either.Either<number | undefined, string> =
  Prepare.budgetOf

/** @internal */
export const invalidTimeout = Prepare.invalidTimeout

/** One thread only: across threads a deadline is a `Date.now()` instant. @internal */
export interface Running {
  readonly budgetMs: number
  readonly startedMs: number
}

/** @internal */
export const start = (budgetMs: number): Effect.Effect<Running> =>
  Effect.map(Clock.currentTimeMillis, (startedMs) => ({ budgetMs, startedMs }))

/** @internal */
export const elapsed = (running: Running): Effect.Effect<number> =>
  Effect.map(Clock.currentTimeMillis, (now) => now - running.startedMs)

/** Never below 1: a spent budget must still bound the next step. @internal */
export const left = (running: Running): Effect.Effect<number> =>
  Effect.map(elapsed(running), (spent) => Math.max(1, running.budgetMs - spent))
