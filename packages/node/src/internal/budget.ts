/**
 * Callers' time budgets: what a `timeout` option may be, and how it becomes milliseconds.
 */
import { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import { maxTimeoutMs } from "@mcp-worker/core/ServerConfig"
import * as Duration from "effect/Duration"
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
