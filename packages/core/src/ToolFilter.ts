/**
 * Which of a server's tools a worker offers: `open(config, { tools: { allow, deny } })`. `listTools` (and so
 * `describe` and `tools`) shows only the tools the filter allows, and a `callTool` of any other is refused with
 * `InvalidInput` before anything is sent. The owner applies it, so it holds on every path a request takes to the
 * server, and it holds for tools the server adds later too (`notifications/tools/list_changed`): a name is judged by
 * the patterns, never by a list kept from before.
 *
 * A pattern is a glob over the whole tool name, case-sensitive: `*` matches any run of characters (none included),
 * `?` exactly one; every other character stands for itself, and `[`, `]`, `{`, `}` and `\` are refused. With `allow`
 * a tool must match one of its patterns; then any `deny` pattern it matches removes it.
 *
 * ```ts
 * const id = yield* workers.open(config, { tools: { allow: ["browser_*"], deny: ["browser_install"] } })
 * ```
 *
 * @since 0.1.0
 */
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as Either from "effect/Either"
import * as internal from "./internal/toolFilter.js"
import type { InvalidInput } from "./McpWorkerError.js"

/**
 * The `tools` option of `open`: glob patterns of the tool names the worker offers (`allow`, every tool when absent)
 * and of those it withholds (`deny`, applied after `allow`). Plain data: it travels with the open to the owner.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFilter extends CallerOptions.ToolFilter {}

/**
 * The most patterns in one list.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPatterns: number = internal.maxPatterns

/**
 * The longest pattern, in UTF-16 code units.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPatternLength: number = internal.maxPatternLength

/**
 * Checks a `tools` option: an object with `allow` and/or `deny`, each an array of at most `maxPatterns` non-empty
 * patterns of at most `maxPatternLength` characters, without control characters or `[ ] { } \`. What is wrong is
 * `InvalidInput` with its path (`options.tools.allow[2]`). `undefined`, `{}` and lists that are both absent are no
 * filter (`Right(undefined)`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const check: (input: unknown, path?: string) => Either.Either<ToolFilter | undefined, InvalidInput> =
  internal.check

/**
 * Whether a glob pattern matches a whole name (`*` any run, `?` one character), in at most pattern × name steps.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches: (pattern: string, name: string) => boolean = internal.matches

/**
 * Whether a worker opened with `filter` offers the tool `name` (no filter offers every tool).
 *
 * @since 0.1.0
 * @category predicates
 */
export const allows: (filter: ToolFilter | undefined, name: string) => boolean = internal.allows
