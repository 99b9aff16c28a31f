import * as Either from "effect/Either"
import type * as JsonValue from "../../JsonValue.js"
import { InvalidInput } from "../../McpWorkerError.js"

/** @internal */
export type Result<A> = Either.Either<A, InvalidInput>

/** @internal */
export const invalid = (path: string, message: string): Result<never> =>
  Either.left(new InvalidInput({ where: "config", path, message, delivery: "not_sent" }))

/** @internal */
export const kindOf = (value: JsonValue.JsonValue | undefined): string =>
  value === undefined
    ? "nothing"
    : value === null
      ? "null"
      : Array.isArray(value)
        ? "an array"
        : typeof value === "object"
          ? "an object"
          : `a ${typeof value}`

// Node's error for a NUL byte in spawn arguments or environment quotes the value.
/** @internal */
export const hasNul = (text: string): boolean => text.includes("\u0000")

/** @internal */
export const isEnvName = (name: string): boolean => name.length > 0 && !name.includes("=") && !hasNul(name)

// A key such as "__proto__" or "constructor" must never reach a prototype.
/** @internal */
export const own = (object: JsonValue.JsonObject, key: string): JsonValue.JsonValue | undefined =>
  Object.hasOwn(object, key) ? object[key] : undefined

/** @internal */
export const string = (value: JsonValue.JsonValue | undefined, path: string, what: string): Result<string> =>
  typeof value !== "string"
    ? invalid(path, `must be ${what} (got ${kindOf(value)})`)
    : value.length === 0
      ? invalid(path, `must be ${what}, not empty`)
      : hasNul(value)
        ? invalid(path, "must not contain a NUL character")
        : Either.right(value)

/** @internal */
export type Environment = Readonly<Record<string, string | undefined>>
