/**
 * The checks every operation's params builder shares: each names the argument that is wrong, and nothing is sent
 * before they pass (C16). They are `@mcp-worker/caller/Operations`'s, answering `Either`s here.
 *
 * @since 0.1.0
 */
import * as Caller from "@mcp-worker/caller/Operations"
import type * as Either from "effect/Either"
import { eitherOf, type InvalidInput } from "./McpWorkerError.js"
import type { Operation, RequestOptions, ResultSchema } from "./Operations.js"

/**
 * A check's answer: the value, or why the arguments cannot be sent.
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
  eitherOf(Caller.invalidArgument(path, message))

/**
 * A non-empty string argument.
 *
 * @since 0.1.0
 * @category checks
 */
export const string = (value: unknown, path: string, what: string): Checked<string> =>
  eitherOf(Caller.string(value, path, what))

/**
 * The params of a paginated list: its `cursor`, when given.
 *
 * @since 0.1.0
 * @category checks
 */
export const cursorParams = (options: { readonly cursor?: string | undefined } | undefined): Checked<string> =>
  eitherOf(Caller.cursorParams(options))

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
): Checked<string> => eitherOf(Caller.object(value, path, what, isProxy))

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
): Checked<string> => eitherOf(Caller.toolCallParams(name, args, isProxy, extra))

/**
 * `@mcp-worker/caller`'s entry `name` with its span, span attributes and result schema: how every operation of the
 * table is made (C104).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCaller = <K extends keyof Caller.Requests, Options extends RequestOptions, A>(
  name: K,
  result: ResultSchema<A>,
  attributes?: (args: Caller.ArgsOf<K>) => Record<string, unknown>
): Operation<Caller.ArgsOf<K>, Options, A> => ({
  // The table's entry `K` (its union of entries is not narrowed by `K`); only the options' durations are this face's.
  ...(Caller.requests[name] as unknown as Caller.Operation<Caller.ArgsOf<K>, Options>),
  method: Caller.requests[name].method,
  span: `McpWorkers.${name}`,
  ...(attributes === undefined ? {} : { attributes }),
  result
})
