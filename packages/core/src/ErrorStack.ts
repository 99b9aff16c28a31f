/**
 * How a tagged error of mcp-worker reads when Node prints it (C97): the rule of `@mcp-worker/caller/ErrorStack`,
 * which every face's classes share.
 *
 * @since 0.1.0
 */
import * as ErrorStack from "@mcp-worker/caller/ErrorStack"

/**
 * A tagged error's first line: `<tag> [<delivery>]: <message>`, without brackets for an error that has no delivery.
 *
 * @since 0.1.0
 * @category formatting
 */
export const headerOf = ErrorStack.headerOf

/**
 * Rewrites `error.stack` as its header and the frames that are not the Effect libraries'.
 *
 * @since 0.1.0
 * @category formatting
 */
export const rewriteStack = ErrorStack.rewriteStack

/**
 * `Base`, a tagged error class, whose instances rewrite their stack once built and print as their header.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readable = ErrorStack.readable
