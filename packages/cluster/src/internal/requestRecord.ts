// A runner's record of the messages its entities accepted, each kept only until its caller has surely stopped
// waiting for it (C89). A message is known by its cluster request id, a Snowflake stamped with the caller's clock
// when it was sent; once that stamp, the caller's budget and a margin have passed, the message is refused unrun
// whether or not it is still recorded. So a repeat is refused for as long as it could arrive (C37), and the record
// holds only the messages of the last budget and margin, however many the runner has served.
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * How far a caller's clock may be from this runner's, and how long a resend written before its caller's deadline
 * may take to arrive. A message stamped further ahead than this is refused too, so that no entry outlives its
 * budget by more than twice the margin.
 */
export const marginMs = 60_000

/** The record is swept of its passed entries at most this often, as messages arrive. */
const sweepIntervalMs = 1_000

/**
 * Why a message may not run: the record holds it (`repeat`), its caller's budget has passed by its stamp
 * (`expired`), or its stamp is further ahead of this runner's clock than the margin (`ahead`).
 */
export type Refusal = "repeat" | "expired" | "ahead"

export interface RequestRecordService {
  /** Records a message that may run (`undefined`), or says why it may not. */
  readonly admit: (requestId: Snowflake.Snowflake, budgetMs: number) => Refusal | undefined
  /** The messages recorded now. */
  readonly size: () => number
}

export class RequestRecord extends Context.Tag("@mcp-worker/cluster/RequestRecord")<
  RequestRecord,
  RequestRecordService
>() {}

export const make: Effect.Effect<RequestRecordService> = Effect.map(Effect.clock, (clock) => {
  const deadlines = new Map<bigint, number>()
  // The time never runs back here: a message forgotten because it expired stays expired if the wall clock is set
  // back.
  let latest = -Infinity
  let sweptAt = -Infinity
  const now = () => (latest = Math.max(latest, clock.unsafeCurrentTimeMillis()))
  const sweep = (at: number) => {
    sweptAt = at
    for (const [id, deadline] of deadlines) if (deadline <= at) deadlines.delete(id)
  }
  return {
    admit: (requestId, budgetMs) => {
      const at = now()
      if (at - sweptAt >= sweepIntervalMs) sweep(at)
      const stamp = Snowflake.timestamp(requestId)
      // An entry leaves the record only once this holds for it, and from then on it holds for good.
      const deadline = stamp + budgetMs + marginMs
      if (!(deadline > at)) return "expired"
      if (stamp > at + marginMs) return "ahead"
      if (deadlines.has(requestId)) return "repeat"
      deadlines.set(requestId, deadline)
      return undefined
    },
    size: () => deadlines.size
  }
})

export const layer: Layer.Layer<RequestRecord> = Layer.effect(RequestRecord, make)
