/**
 * Results that go to a file instead of into the answer. `saveTo` writes a call's raw result to the path it names,
 * whatever its size. `onTooLarge` is the policy for a result larger than the config's `maxResultBytes`: by default
 * the call fails with `ResultTooLarge`; `{ spill: directory }` streams the result instead to a new file of that
 * directory, exactly as `saveTo` writes one, and the call answers a `SpilledResult` saying where it is. A result within
 * the limit answers as usual. The policy is a call's (`callTool`'s options) or its worker's (`open`'s options), the
 * call's first.
 *
 * Spilled files are the caller's: nothing removes one once it was answered with. The checks are
 * `@mcp-worker/caller/ResultFile`'s, answering `Either`s here.
 *
 * @since 0.1.0
 */
import * as Caller from "@mcp-worker/caller/ResultFile"
import type * as Either from "effect/Either"
import { eitherOf, type InvalidInput } from "./McpWorkerError.js"

/**
 * What a call with `saveTo` answers: where the result is, its size and SHA-256 (of the file's bytes), its `isError`,
 * and the start of its first `text` content (at most 1024 UTF-16 code units), or `null`.
 *
 * @since 0.1.0
 * @category models
 */
export type SavedResult = Caller.SavedResult

/**
 * What a call does with a result over `maxResultBytes`: fail with `ResultTooLarge` (`"fail"`, the default), or spill
 * it into a new file of an absolute directory (`{ spill }`). On a call, `"fail"` also overrides its worker's spill.
 *
 * @since 0.1.0
 * @category models
 */
export type TooLargePolicy = Caller.TooLargePolicy

/**
 * What a call answers when its result passed `maxResultBytes` and was spilled: the `saveTo` summary of the new file,
 * the `limit` the result passed, and one `text` content item saying where it is, so that code which reads a tool's
 * content finds it (it is a `CallToolResult` too). Tell it from a server's result with `isSpilled`, never by its
 * fields: a server may answer anything, `spilled: true` included.
 *
 * @since 0.1.0
 * @category models
 */
export type SpilledResult = Caller.SpilledResult

/**
 * Whether a call's answer is a `SpilledResult` made by mcp-worker in this thread (a server's result never is).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSpilled: (u: unknown) => u is SpilledResult = Caller.isSpilled

/**
 * The owner's answer to a call whose result was spilled, as it travels to the caller's surface.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeSpilled: (summary: SavedResult, limit: number) => ReadonlyArray<unknown> = Caller.encodeSpilled

/**
 * What a caller's surface answers for the value an owner sent: a spill's wire form becomes a `SpilledResult`, any
 * other value is the server's result and is returned as is.
 *
 * @since 0.1.0
 * @category encoding
 */
export const answerOf: (value: unknown) => unknown = Caller.answerOf

/**
 * The wire form of an answer again, for a surface that hands it on to another process (`answerOf` reads it there).
 *
 * @since 0.1.0
 * @category encoding
 */
export const wireOf: (value: unknown) => unknown = Caller.wireOf

/**
 * The name of a spilled result's file: the tool's name (characters other than `A-Za-z0-9._-` as `_`, no leading dot,
 * at most 64 characters), then the request id, `.json`. A request id is never reused, so the name is new.
 *
 * @since 0.1.0
 * @category utils
 */
export const fileName: (tool: unknown, requestId: string) => string = Caller.fileName

/**
 * Why a path cannot be written (`saveTo`) or a directory cannot take spilled results (`spill`), checked by the
 * platform; `undefined` when it can.
 *
 * @since 0.1.0
 * @category models
 */
export type Check = Caller.Check

/**
 * `saveTo`, checked: the path, `undefined` when there is none. A surface without a `check` refuses it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const saveToOf = (
  options: { readonly saveTo?: unknown } | undefined,
  check: Check | undefined
): Either.Either<string | undefined, InvalidInput> => eitherOf(Caller.saveToOf(options, check))

/**
 * A call's `onTooLarge`, checked: the directory to spill to, `false` for `"fail"` (its worker's spill does not apply),
 * `undefined` when it has none (its worker's policy applies). A surface without a `check` refuses a spill.
 *
 * @since 0.1.0
 * @category constructors
 */
export const callPolicyOf = (
  options: { readonly onTooLarge?: unknown } | undefined,
  check: Check | undefined
): Either.Either<string | false | undefined, InvalidInput> => eitherOf(Caller.callPolicyOf(options, check))

/**
 * `open`'s `onTooLarge`, checked: the worker's spill directory, or `undefined` (its calls fail with
 * `ResultTooLarge`). A surface without a `check` refuses a spill.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openPolicyOf = (
  options: { readonly onTooLarge?: unknown } | undefined,
  check: Check | undefined
): Either.Either<string | undefined, InvalidInput> => eitherOf(Caller.openPolicyOf(options, check))
