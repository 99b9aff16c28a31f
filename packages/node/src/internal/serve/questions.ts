/**
 * A worker's questions during a gateway call (elicitation, sampling), put to the MCP client that made the call when
 * it declared the capability (C151); any other question is answered by the host's handlers (C31).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Asker } from "../shared/connection.js"

/** How a session's server puts one request to its client, on the stream of the call in flight. */
export type Send = (
  request: { readonly method: string; readonly params: Record<string, unknown> },
  signal: AbortSignal
) => Promise<unknown>

/** The capability a client declares to be asked a kind of question; roots stay the host's (C151). */
const capabilityOf = { "elicitation/create": "elicitation", "sampling/createMessage": "sampling" } as const

/** The client's side of one call: what it declared, how to ask it, and the end of the call. @internal */
export interface Caller {
  readonly declared: () => Readonly<Record<string, unknown>> | undefined
  readonly send: Send
  /** Aborts when the call has ended: a question still open then is withdrawn (C153). */
  readonly ended: AbortSignal
}

/** The asker of one call, which takes the kinds of question its client declared. @internal */
export const askerOf =
  (caller: Caller): Asker =>
  (method) => {
    const capability = capabilityOf[method as keyof typeof capabilityOf]
    if (capability === undefined || caller.declared()?.[capability] === undefined) return undefined
    return (params) =>
      Effect.tryPromise({
        // The host's budget for an answer is `answer`'s timeout (C31), which interrupts this and aborts `signal`.
        try: (signal) =>
          caller.send({ method, params: params as Record<string, unknown> }, AbortSignal.any([signal, caller.ended])),
        catch: (error) => error
      })
  }
