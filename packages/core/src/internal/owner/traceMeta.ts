/**
 * W3C trace context in a request's `_meta` (SEP-414: MCP reserves `traceparent`, `tracestate` and `baggage` there for
 * it), so that the server's spans of a request are children of the caller's trace (C83). The owner writes it from the
 * span context the request carries (`OwnerProtocol.TraceContext`); a caller's own `_meta` keys are never replaced.
 *
 * @internal
 */
import type * as OwnerProtocol from "../../OwnerProtocol.js"

/** The `_meta` key of W3C `traceparent`, as the TypeScript SDK names it (`TRACEPARENT_META_KEY`). @internal */
export const traceparentKey = "traceparent"

const hex32 = /^[0-9a-f]{32}$/
const hex16 = /^[0-9a-f]{16}$/
const zeros32 = "0".repeat(32)
const zeros16 = "0".repeat(16)

/**
 * The `traceparent` of a span context (version `00`), or `undefined` when its ids are no W3C ids (a tracer of its
 * own making): nothing is then sent rather than something a server would reject.
 *
 * @internal
 */
export const traceparentOf = ([traceId, spanId, sampled]: OwnerProtocol.TraceContext): string | undefined =>
  hex32.test(traceId) && hex16.test(spanId) && traceId !== zeros32 && spanId !== zeros16
    ? `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`
    : undefined

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * `params` with the span's `traceparent` in its `_meta`; `params` itself when there is no span, or when the caller's
 * own `_meta` already carries trace context (theirs wins, C83).
 *
 * @internal
 */
export const withTraceContext = (
  params: Record<string, unknown>,
  trace: OwnerProtocol.TraceContext | undefined
): Record<string, unknown> => {
  if (trace === undefined) return params
  const meta = params._meta
  if (isObject(meta) && meta[traceparentKey] !== undefined) return params
  const traceparent = traceparentOf(trace)
  if (traceparent === undefined) return params
  return { ...params, _meta: { ...(isObject(meta) ? meta : {}), [traceparentKey]: traceparent } }
}
