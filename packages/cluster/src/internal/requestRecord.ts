// C89, C37: refused once stamp, budget and margin have passed, so the record stays small.
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Clock skew plus a resend's travel; no entry outlives its budget by more than twice this. */
export const marginMs = 60_000

const sweepIntervalMs = 1_000

export type Refusal = "repeat" | "expired" | "ahead"

export interface RequestRecordService {
  /** `undefined`: recorded, it may run. */
  readonly admit: (requestId: Snowflake.Snowflake, budgetMs: number) => Refusal | undefined
  readonly size: () => number
}

export class RequestRecord extends Context.Tag("@mcp-worker/cluster/RequestRecord")<
  RequestRecord,
  RequestRecordService
>() {}

export const make: Effect.Effect<RequestRecordService> = Effect.map(Effect.clock, (clock) => {
  const deadlines = new Map<bigint, number>()
  // Never runs back: an expired message stays expired if the wall clock is set back.
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
      // Once true it stays true, so forgetting the entry is safe.
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
