/**
 * A request's fields as every plane's message carries them, in plain TypeScript: the thread plane's `RemoteCall` and
 * `Direct` and the socket's payload are built from this one type, and a type-level test proves it equal to core's
 * `OwnerProtocol.Envelope`, which the owner's `Request` carries. A new request option is one field here, one there.
 *
 * @internal
 */
import type * as Operations from "../Operations.js"

/** A caller's span: trace id, span id, sampled, and the W3C `tracestate` and `baggage` it carries. @internal */
export type TraceContext = readonly [string, string, boolean, (string | undefined)?, (string | undefined)?]

/** A call's spill directory (`onTooLarge`), or `false`: the call fails a result over the limit. @internal */
export type Spill = string | false

/** One request of the operation table, as it travels: the budget as an epoch `deadline` (C9). @internal */
export interface Envelope {
  readonly method: Operations.Method
  readonly params: string
  readonly deadline: number
  readonly idleMs?: number | undefined
  readonly progress?: boolean | undefined
  readonly saveTo?: string | undefined
  readonly spill?: Spill | undefined
  readonly trace?: TraceContext | undefined
}

/** The caller's budget (a duration, on this thread) as the deadline every other thread and process reads. @internal */
export const deadlineOf = (budgetMs: number | undefined): number | undefined =>
  budgetMs === undefined ? undefined : Date.now() + budgetMs
