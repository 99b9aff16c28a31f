/**
 * JSON plain data: the only thing a config or the arguments of a call may be (C16), and JSON text is the only
 * form in which they cross a thread (C17).
 *
 * `check` walks a value once, iteratively (an explicit stack, so hostile nesting cannot overflow the call stack),
 * without ever running user code: no getter, no `toJSON`, no proxy trap when `isProxy` is given. Once a value
 * has passed, the native `JSON.stringify` writes it exactly, and `JSON.parse` reads it back as the same data.
 *
 * Error messages name the offending path and the kind of value, never the value itself: it may be a secret. The
 * checks are `@mcp-worker/caller/JsonValue`'s, which a caller without Effect runs too; here they answer `Either`s.
 *
 * @since 0.1.0
 */
import * as Caller from "@mcp-worker/caller/JsonValue"
import type * as Either from "effect/Either"
import { eitherOf, type InvalidInput } from "./McpWorkerError.js"

/**
 * JSON plain data: what configs and call arguments may hold.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue = Caller.JsonValue

/**
 * A dense array of JSON plain data.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonArray = Caller.JsonArray

/**
 * A plain object of JSON plain data.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = Caller.JsonObject

/**
 * The deepest nesting of arrays and objects accepted: a value at the root counts as depth 1.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDepth: number = Caller.maxDepth

/**
 * Where a value comes from (it becomes `InvalidInput.where`) and the name its paths start with (`args`,
 * `config`). `isProxy` lets a platform that can see proxies (Node's `util.types.isProxy`) reject them before
 * any of their traps can run.
 *
 * @since 0.1.0
 * @category models
 */
export type CheckOptions = Caller.CheckOptions

/**
 * Validates that a value is JSON plain data, reporting the first offending path in document order.
 *
 * @since 0.1.0
 * @category validation
 */
export const check = (value: unknown, options: CheckOptions): Either.Either<JsonValue, InvalidInput> =>
  eitherOf(Caller.check(value, options))

/**
 * Validates a value with `check`, then writes it as JSON text.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (value: unknown, options: CheckOptions): Either.Either<string, InvalidInput> =>
  eitherOf(Caller.encode(value, options))

/**
 * Where decoded text came from, for the error when it is not JSON (defaults: `"arguments"`, `"args"`).
 *
 * @since 0.1.0
 * @category models
 */
export type DecodeOptions = Caller.DecodeOptions

/**
 * Reads JSON text. A `"__proto__"` key stays an own data property (that is how `JSON.parse` defines properties),
 * so decoding can never change a prototype. Depth is not limited here: text written by `encode` never nests deeper
 * than `maxDepth`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (text: string, options?: DecodeOptions): Either.Either<JsonValue, InvalidInput> =>
  eitherOf(Caller.decode(text, options))

/**
 * Reads JSON text that is known to be valid (it was written by `encode`); throws a `SyntaxError` otherwise.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnsafe: (text: string) => JsonValue = Caller.decodeUnsafe

/**
 * Whether a value is a plain object: its prototype is `Object.prototype` (of any realm) or `null`, and it is
 * not an array. Its properties are not inspected.
 *
 * @since 0.1.0
 * @category guards
 */
export const isJsonObject: (u: unknown) => u is JsonObject = Caller.isJsonObject

/**
 * Appends one key to a path the way `InvalidInput.path` writes them: `.name` for identifier-like keys,
 * `["a b"]` otherwise, `[2]` for array indices.
 *
 * @since 0.1.0
 * @category paths
 */
export const appendPath: (path: string, key: string | number) => string = Caller.appendPath
