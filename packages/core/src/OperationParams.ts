/**
 * The checks every operation's params builder shares (`Operations`, `Tasks`): each names the argument that is wrong,
 * and nothing is sent before they pass (C16).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as JsonValue from "./JsonValue.js"
import { InvalidInput } from "./McpWorkerError.js"

/**
 * A params builder's answer: the value, or why the arguments cannot be sent.
 *
 * @since 0.1.0
 * @category models
 */
export type Checked<A> = Either.Either<A, InvalidInput>

/**
 * Refuses an argument, naming it; `not_sent`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalid = (path: string, message: string): Checked<never> =>
  Either.left(new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" }))

/**
 * A non-empty string argument.
 *
 * @since 0.1.0
 * @category checks
 */
export const string = (value: unknown, path: string, what: string): Checked<string> =>
  typeof value === "string" && value.length > 0
    ? Either.right(value)
    : invalid(path, `${what} must be a non-empty string`)

/**
 * The params of a paginated list: its `cursor`, when given.
 *
 * @since 0.1.0
 * @category checks
 */
export const cursorParams = (options: { readonly cursor?: string | undefined } | undefined): Checked<string> => {
  const cursor = options?.cursor
  if (cursor === undefined) return Either.right("{}")
  return typeof cursor === "string"
    ? Either.right(JSON.stringify({ cursor }))
    : invalid("cursor", "the cursor must be a string")
}

/**
 * An object argument, checked as JSON plain data (C16) and encoded once.
 *
 * @since 0.1.0
 * @category checks
 */
export const object = (
  value: unknown,
  path: string,
  what: string,
  isProxy: ((u: unknown) => boolean) | undefined
): Checked<string> =>
  JsonValue.isJsonObject(value)
    ? JsonValue.encode(value, { where: "arguments", root: path, isProxy })
    : invalid(path, `${what} must be a plain object`)

/**
 * A tool call's params around its arguments' JSON text, validated once and stringified once; `extra` is JSON text
 * of further members (`,"task":{…}`), or empty.
 *
 * @since 0.1.0
 * @category checks
 */
export const toolCallParams = (
  name: unknown,
  args: unknown,
  isProxy: ((u: unknown) => boolean) | undefined,
  extra: string
): Checked<string> => {
  const tool = string(name, "name", "the tool name")
  if (Either.isLeft(tool)) return tool
  const text = args === undefined ? Either.right("{}") : object(args, "args", "tool arguments", isProxy)
  return Either.isLeft(text)
    ? text
    : Either.right(`{"name":${JSON.stringify(tool.right)},"arguments":${text.right}${extra}}`)
}
