/**
 * What the owner reads out of the errors the SDK and the transports throw at it: their text, and whether a result
 * broke the protocol's schema. The typed errors it answers with are `McpWorkerError`'s.
 */

/**
 * Reported by a transport through `onerror` when a message from the server passed the config's `maxResultBytes`:
 * the transport skips the rest of it unread, and the owner fails the request in flight with `ResultTooLarge`.
 *
 * @internal
 */
export class OversizedMessage extends Error {
  override readonly name = "OversizedMessage"
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** Why the result could not be spilled, when the request had a spill (`onTooLarge`). */
    readonly spillFailed?: string | undefined
  ) {
    super(`a message from the server passed maxResultBytes (${bytes} > ${limit} bytes)`)
  }
}

/**
 * Reported by a transport through `onerror` when the response stream of a request ended before its response (a
 * 2026-07-28 Streamable HTTP exchange, which nothing resumes): the owner ends the request in flight with
 * `DeliveryUnknown` and never sends it again (C54).
 *
 * @internal
 */
export class StreamBroken extends Error {
  override readonly name = "StreamBroken"
  constructor() {
    super("the response stream of a request ended before its response")
  }
}

/** @internal */
export const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : "unknown error"

/** @internal */
export const isSchemaError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues)

/** A schema error lists where the result broke the protocol; only paths and codes, never values. @internal */
export const schemaErrorSummary = (error: unknown): string => {
  const issues = (error as { issues: Array<{ path?: Array<unknown>; code?: unknown }> }).issues
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "(root)"}: ${String(issue.code ?? "invalid")}`)
    .join("; ")
}
