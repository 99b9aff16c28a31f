/**
 * Callers' time budgets: what a `timeout` option may be, how it becomes milliseconds, and how much of it is left.
 */
import { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import { maxTimeoutMs } from "@mcp-worker/core/ServerConfig"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

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
 * (`Duration.infinity` included) are clamped to the longest timer; anything that is not a duration, or is
 * negative, is refused.
 *
 * @internal
 */
export const budgetOf = (input: Duration.DurationInput | undefined): Either.Either<number | undefined, string> => {
  if (input === undefined) return Either.right(undefined)
  if (isNegative(input)) return Either.left("the timeout must be a non-negative duration")
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left("the timeout is not a duration")
  const ms = Duration.toMillis(decoded.value)
  if (Number.isNaN(ms) || ms < 0) return Either.left("the timeout must be a non-negative duration")
  return Either.right(Math.min(ms, maxTimeoutMs))
}

/** @internal */
export const invalidTimeout = (where: "config" | "arguments", message: string) =>
  new InvalidInput({ where, path: "options.timeout", message, delivery: "not_sent" })

/**
 * A budget being spent, as the `Clock` service tells time. Only for budgets that stay on one thread: a deadline
 * handed to another thread is a `Date.now()` instant (wire/remoteProtocol.ts), the one clock all threads share.
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
