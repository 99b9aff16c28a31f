/**
 * C83, C84: W3C trace context in `_meta`, where SEP-414 reserves it.
 *
 * @internal
 */
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"

/** The SDK's `TRACEPARENT_META_KEY`. @internal */
export const traceparentKey = "traceparent"

/** The SDK's `TRACESTATE_META_KEY`. @internal */
export const tracestateKey = "tracestate"

/** The SDK's `BAGGAGE_META_KEY`. @internal */
export const baggageKey = "baggage"

const hex32 = /^[0-9a-f]{32}$/
const hex16 = /^[0-9a-f]{16}$/
const zeros32 = "0".repeat(32)
const zeros16 = "0".repeat(16)

/** Ids that are no W3C ids send nothing a server would reject. @internal */
export const traceparentOf = ([traceId, spanId, sampled]: OwnerProtocol.TraceContext): string | undefined =>
  hex32.test(traceId) && hex16.test(spanId) && traceId !== zeros32 && spanId !== zeros16
    ? `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`
    : undefined

// What every vendor propagates, and what OpenTelemetry keeps.
const tracestateMaxMembers = 32
const tracestateMaxLength = 512
const tracestateMember =
  /^(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

/** @internal */
export const validTracestate = (header: string): string | undefined => {
  if (header.length === 0 || header.length > tracestateMaxLength) return undefined
  const members = header.split(",")
  if (members.length > tracestateMaxMembers) return undefined
  const keys = new Set<string>()
  for (const raw of members) {
    const member = raw.trim()
    if (member === "") continue
    if (!tracestateMember.test(member)) return undefined
    const key = member.slice(0, member.indexOf("="))
    if (keys.has(key)) return undefined
    keys.add(key)
  }
  return keys.size === 0 ? undefined : header
}

// The limits OpenTelemetry's propagator keeps.
const baggageMaxMembers = 180
const baggageMaxMemberLength = 4096
const baggageMaxLength = 8192
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const baggageValue = "[\\x21\\x23-\\x2b\\x2d-\\x3a\\x3c-\\x5b\\x5d-\\x7e]*"
const baggageMember = new RegExp(
  `^${token}[ \\t]*=[ \\t]*${baggageValue}(?:[ \\t]*;[ \\t]*${token}(?:[ \\t]*=[ \\t]*${baggageValue})?)*$`
)

/** UTF-16 units count as bytes: the grammar allows only ASCII. @internal */
export const validBaggage = (header: string): string | undefined => {
  if (header.length === 0 || header.length > baggageMaxLength) return undefined
  const members = header.split(",")
  if (members.length > baggageMaxMembers) return undefined
  for (const raw of members) {
    const member = raw.trim()
    if (member.length > baggageMaxMemberLength || !baggageMember.test(member)) return undefined
  }
  return header
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** C83; C84: a caller's own `traceparent` names another trace. @internal */
export const withTraceContext = (
  params: Record<string, unknown>,
  trace: OwnerProtocol.TraceContext | undefined
): Record<string, unknown> => {
  if (trace === undefined) return params
  const meta = isObject(params._meta) ? params._meta : undefined
  const added: Record<string, string> = {}
  let any = false
  if (meta?.[traceparentKey] === undefined) {
    const traceparent = traceparentOf(trace)
    if (traceparent !== undefined) {
      added[traceparentKey] = traceparent
      any = true
      const tracestate = trace[3] === undefined ? undefined : validTracestate(trace[3])
      if (tracestate !== undefined && meta?.[tracestateKey] === undefined) added[tracestateKey] = tracestate
    }
  }
  const baggage = trace[4] === undefined ? undefined : validBaggage(trace[4])
  if (baggage !== undefined && meta?.[baggageKey] === undefined) {
    added[baggageKey] = baggage
    any = true
  }
  return any ? { ...params, _meta: { ...meta, ...added } } : params
}
