// C151, C31
import * as Effect from "effect/Effect"
import type { Asker } from "../shared/connection.js"

export type Send = (
  request: { readonly method: string; readonly params: Record<string, unknown> },
  signal: AbortSignal
) => Promise<unknown>

/** C151 */
const capabilityOf = { "elicitation/create": "elicitation", "sampling/createMessage": "sampling" } as const

/** @internal */
export interface Caller {
  readonly declared: () => Readonly<Record<string, unknown>> | undefined
  readonly send: Send
  /** C153 */
  readonly ended: AbortSignal
}

/** @internal */
export const askerOf =
  (caller: Caller): Asker =>
  (method) => {
    const capability = capabilityOf[method as keyof typeof capabilityOf]
    if (capability === undefined || caller.declared()?.[capability] === undefined) return undefined
    return (params) =>
      Effect.tryPromise({
        // C31
        try: (signal) =>
          caller.send({ method, params: params as Record<string, unknown> }, AbortSignal.any([signal, caller.ended])),
        catch: (error) => error
      })
  }
