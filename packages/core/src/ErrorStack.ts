/**
 * How a tagged error of mcp-worker reads when Node prints it (C97): the rule of `@mcp-worker/caller/ErrorStack`,
 * which every face's classes share.
 *
 * @since 0.1.0
 */
export * from "@mcp-worker/caller/ErrorStack"
