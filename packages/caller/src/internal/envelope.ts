// A test proves this equal to core's `OwnerProtocol.Envelope`.
import type * as Operations from "../Operations.js"

/** @internal */
export type TraceContext = readonly [string, string, boolean, (string | undefined)?, (string | undefined)?]

/** @internal */
export type Spill = string | false

/** @internal */
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
