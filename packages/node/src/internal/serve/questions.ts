// C151, C31
import * as Effect from "effect/Effect"
import type { Asker } from "../shared/connection.js"

export type Send = (
  request: { readonly method: string; readonly params: Record<string, unknown> },
  signal: AbortSignal
) => Promise<unknown>

/** C151 */
const capabilityOf = { "elicitation/create": "elicitation", "sampling/createMessage": "sampling" } as const

/** Whether a client declared any capability a worker's server can ask it by (C170). @internal */
export const declaresAny = (declared: Readonly<Record<string, unknown>> | undefined): boolean =>
  Object.values(capabilityOf).some((capability) => declared?.[capability] !== undefined)

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

// C170–C174: a 2026-07-28 client is asked by ending its exchange with `input_required`; its call is held here.

/** A question of a held call, open until a retry answers it. @internal */
interface Open {
  readonly method: string
  readonly params: Record<string, unknown>
  readonly answer: (response: unknown) => void
}

/** What a waiting exchange is answered with. @internal */
export type Step =
  | { readonly _tag: "Asked"; readonly inputRequests: Record<string, { method: string; params: unknown }> }
  | { readonly _tag: "Done"; readonly result: unknown }
  | { readonly _tag: "Failed"; readonly error: unknown }

/** A 2026-07-28 client's call between its exchanges: one record, released on every end (C173). @internal */
export interface Held {
  readonly id: string
  readonly grant: string
  readonly tool: string
  /** The round whose state a retry must carry; a used state is refused (C172). */
  round: number
  declared: Readonly<Record<string, unknown>> | undefined
  readonly open: Map<string, Open>
  asked: number
  settled: Step | undefined
  waiting: ((step: Step) => void) | undefined
  /** The waiting exchange's progress, under its own token (C136). */
  progress: ((params: Record<string, unknown>) => void) | undefined
  /** Ends the call at the worker's server (C148's cancel). */
  readonly end: AbortController
  readonly release: () => void
}

/** @internal */
export const hold = (id: string, grant: string, tool: string, release: () => void): Held => ({
  id,
  grant,
  tool,
  round: 0,
  declared: undefined,
  open: new Map(),
  asked: 0,
  settled: undefined,
  waiting: undefined,
  progress: undefined,
  end: new AbortController(),
  release
})

// A waiting exchange is answered by the call's end first, else by the questions still open.
const poke = (held: Held): void => {
  const step: Step | undefined =
    held.settled ??
    (held.open.size === 0
      ? undefined
      : {
          _tag: "Asked",
          inputRequests: Object.fromEntries(
            [...held.open].map(([key, open]) => [key, { method: open.method, params: open.params }])
          )
        })
  if (step === undefined) return
  const waiting = held.waiting
  held.waiting = undefined
  if (waiting !== undefined) return waiting(step)
  // C173: an end no exchange waits for is dropped, and the record with it.
  if (held.settled !== undefined) held.release()
}

/** The caller a held call's worker asks: its questions wait for the client's retry (C170). @internal */
export const heldCaller = (held: Held): Omit<Caller, "ended"> => ({
  declared: () => held.declared,
  send: (question, signal) =>
    new Promise((resolve, reject) => {
      const key = `q${++held.asked}`
      const onAbort = () => {
        if (!held.open.delete(key)) return
        reject(signal.reason)
        // C173: no retry came within the host's timeout; the call's end will find no one.
        if (held.waiting === undefined) held.release()
      }
      if (signal.aborted) return reject(signal.reason)
      signal.addEventListener("abort", onAbort, { once: true })
      held.open.set(key, {
        ...question,
        answer: (response) => {
          signal.removeEventListener("abort", onAbort)
          held.open.delete(key)
          resolve(response)
        }
      })
      poke(held)
    })
})

/** The call's end, for whichever exchange waits now or next. @internal */
export const settle = (held: Held, step: Step): void => {
  held.settled = step
  poke(held)
}

/** C171: a retry's responses answer the questions they name; the rest stay open. @internal */
export const answer = (held: Held, responses: Readonly<Record<string, unknown>> | undefined): void => {
  for (const [key, response] of Object.entries(responses ?? {})) held.open.get(key)?.answer(response)
}

/** One exchange's wait: the next question, or the call's end; its abort ends the call (C148). @internal */
export const next = (held: Held, signal: AbortSignal): Promise<Step> =>
  new Promise((resolve, reject) => {
    const onAbort = () => {
      held.waiting = undefined
      held.end.abort(signal.reason)
      held.release()
      reject(signal.reason)
    }
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    held.waiting = (step) => {
      signal.removeEventListener("abort", onAbort)
      resolve(step)
    }
    queueMicrotask(() => poke(held))
  })
