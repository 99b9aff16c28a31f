/**
 * The owner's state: one tagged union (`Idle | Opening | Ready | Failed | Closed`) around one SDK `Client`, the
 * record that holds it (`Machine`), each request's abort (`RequestAbort`), and the small functions that read and move
 * it. Every other module of the owner takes the `Machine` and calls these.
 */
import type { Client } from "@modelcontextprotocol/client"
import * as Data from "effect/Data"
import {
  DeliveryUnknown,
  type FailureKind,
  type InputRoundsExceeded,
  type InvalidInput,
  type ResultTooLarge,
  type PreflightFailed,
  type TaskEnded,
  type UnusableResult,
  type ServerError,
  type WorkerBusy,
  WorkerFailed
} from "../../McpWorkerError.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Checks from "../ownerProtocol/checks.js"
import type * as ToolFilter from "../toolFilter.js"
import type * as Direct from "./direct.js"
import type * as ParamHeaders from "./paramHeaders.js"
import type * as Tasks from "./tasks.js"
import type * as TasksDispatch from "./tasksDispatch.js"

/** Why the connection is gone, as reported to the host once. @internal */
export interface Failure {
  readonly kind: FailureKind
  readonly message: string
}

/** A connection that completed initialize, and the requests in flight over it. @internal */
export interface Connection {
  readonly workerId: string
  /** What never appears in a message; it grows as tokens are obtained. */
  readonly secrets: () => ReadonlyArray<string>
  readonly transport: Owner.OwnerTransport
  readonly client: Client
  /** One controller per request, so that a cancel aborts exactly the request it names. */
  readonly inflight: Map<string, RequestAbort>
  /** The requests that asked for progress, by the progress token they carry (their request id). */
  readonly progress: Map<string, RequestAbort>
  /** The requests with an idle budget (C121), by request id: their timers, started anew by each progress. */
  readonly idle: Map<string, IdleWatch>
  /** Set once the client negotiated the 2026-07-28 era: what only that era needs (C56, C57). */
  readonly modern: Modern | undefined
  /** The worker's spill directory (`open`'s `onTooLarge`), for a `callTool` that names no policy of its own. */
  readonly spill: string | undefined
  /** Which tools the worker offers, from its open (C59); `undefined`: every tool. */
  readonly tools: ToolFilter.Compiled | undefined
  /** What the tools listed so far declared about tasks (C72). */
  readonly taskSupport: Tasks.Known
}

/** A request's idle budget and the timer that ends it (C121). @internal */
export interface IdleWatch {
  readonly idleMs: number
  timer: ReturnType<typeof setTimeout>
}

/**
 * A modern connection's own state: the `subscriptions/listen` stream that feeds `events` (C57), opened anew when the
 * resource URIs subscribed to change, and what the tools listed declare for headers (C62).
 *
 * @internal
 */
export interface Modern {
  readonly subscribed: Set<string>
  listening: { close(): Promise<void> } | undefined
  /** Over Streamable HTTP, whose requests carry headers: the tools' `x-mcp-header` declarations listed (C62). */
  readonly params: ParamHeaders.Known | undefined
  /** The `_meta` envelope of this era's requests, for those sent beside the client (C75). */
  readonly framing: TasksDispatch.Framing
  /** The config's bound on the rounds of one call (C53), for a task's start. */
  readonly maxInputRounds: number
}

/**
 * Where the owner is. `Opening` and `Closed` keep whatever the open built (a transport, a client): `close` ends
 * it in any state, and closing again is harmless. A failed open ends as `Closed`, having stopped its transport.
 *
 * @internal
 */
export type State = Data.TaggedEnum<{
  Idle: {}
  Opening: {
    readonly workerId: string
    readonly transport: Owner.OwnerTransport | undefined
    readonly client: Client | undefined
  }
  Ready: { readonly connection: Connection }
  Failed: { readonly connection: Connection; readonly failure: Failure }
  Closed: {
    readonly workerId: string
    readonly failure: Failure | undefined
    readonly transport: Owner.OwnerTransport | undefined
    readonly client: Client | undefined
  }
}>

/** @internal */
export const State = Data.taggedEnum<State>()

/** The port an owner reports on: the host's, and in an owner thread the direct replies to remote callers. @internal */
export type Port = Direct.DirectPort

/** The owner's one mutable cell, the port it reports on, and the server's requests waiting for the host. @internal */
export interface Machine {
  state: State
  readonly port: Port
  readonly serverRequests: Map<
    string,
    { readonly resolve: (result: unknown) => void; readonly reject: (e: Error) => void }
  >
  nextServerRequest: number
  /** The remote caller's request taken directly and not yet answered: this owner answers it itself (C8, C9). */
  direct: DirectInFlight | undefined
  /** How long a remote caller with a request taken directly may be silent before it is taken for gone. */
  callerGoneAfterMs: number
}

/**
 * A remote caller's request an owner thread took straight from the caller: whom it answers, what it counts of it
 * (C80), and its deadline's timer, run here since no other thread knows of the request.
 *
 * @internal
 */
export interface DirectInFlight {
  readonly replyTo: OwnerProtocol.ReplyTo
  readonly requestId: string
  readonly method: OwnerProtocol.Method
  /** `performance.now()` when it was sent. */
  readonly sentAt: number
  /** The caller's deadline (epoch ms). */
  readonly deadline: number
  /** When the caller was last heard from (epoch ms): its request, its keep-alives. */
  heardAt: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** A machine that has opened nothing yet. @internal */
export const makeMachine = (port: Port): Machine => ({
  state: State.Idle(),
  port,
  serverRequests: new Map(),
  nextServerRequest: 0,
  direct: undefined,
  callerGoneAfterMs: Number.POSITIVE_INFINITY
})

/** @internal */
export const workerIdOf: (state: State) => string = State.$match({
  Idle: () => "",
  Opening: ({ workerId }) => workerId,
  Ready: ({ connection }) => connection.workerId,
  Failed: ({ connection }) => connection.workerId,
  Closed: ({ workerId }) => workerId
})

/** @internal */
export const failureOf = (state: State): Failure | undefined =>
  state._tag === "Failed" || state._tag === "Closed" ? state.failure : undefined

/** @internal */
export const inflightOf = (state: State): Map<string, RequestAbort> | undefined =>
  state._tag === "Ready" || state._tag === "Failed" ? state.connection.inflight : undefined

/** What `close` has to end. @internal */
export const heldBy = (
  state: State
): { readonly transport: Owner.OwnerTransport | undefined; readonly client: Client | undefined } =>
  State.$match(state, {
    Idle: () => ({ transport: undefined, client: undefined }),
    Opening: ({ client, transport }) => ({ transport, client }),
    Ready: ({ connection }) => connection,
    Failed: ({ connection }) => connection,
    Closed: ({ client, transport }) => ({ transport, client })
  })

/** @internal */
export const closedFrom = (state: State): State =>
  State.Closed({ workerId: workerIdOf(state), failure: failureOf(state), ...heldBy(state) })

/** The connection failed: recorded and reported once, from `Ready`. Returns the failure on record. @internal */
export const fail = (machine: Machine, kind: FailureKind, message: string): Failure => {
  const state = machine.state
  if (state._tag !== "Ready") return failureOf(state) ?? { kind, message }
  const failure = { kind, message }
  machine.state = State.Failed({ connection: state.connection, failure })
  machine.port.post({ _tag: "Failed", kind, message, at: new Date().toISOString() })
  return failure
}

/** The connection is gone: the recorded failure if there is one, else what the caller saw. @internal */
export const connectionGone = (
  state: State,
  delivery: "not_sent" | "unknown",
  kind: FailureKind,
  message: string
): WorkerFailed => {
  const failure = failureOf(state)
  return new WorkerFailed({
    workerId: workerIdOf(state),
    kind: failure?.kind ?? kind,
    message: failure?.message ?? message,
    delivery
  })
}

/**
 * The request in flight, if any: one at a time (C8), decided here for every caller. A caller that ended its request
 * early told this owner first (a `Cancel`, an `Interrupt`), on the channel its next request travels.
 *
 * @internal
 */
export const busyWith = (connection: Connection): string | undefined => {
  for (const requestId of connection.inflight.keys()) return requestId
  return undefined
}

/** Only the exact request named; an id that is no longer in flight changes nothing. @internal */
export const cancel = (state: State, requestId: string, reason: string): boolean => {
  const inflight = inflightOf(state)
  const controller = inflight?.get(requestId)
  if (inflight === undefined || controller === undefined) return false
  inflight.delete(requestId)
  controller.abort(reason)
  return true
}

/**
 * The answer to a failed request: straight to its remote caller when this owner took it directly, else to the host.
 *
 * @internal
 */
export const postFailure = (
  machine: Machine,
  requestId: string,
  error:
    | ServerError
    | WorkerFailed
    | ResultTooLarge
    | InvalidInput
    | WorkerBusy
    | DeliveryUnknown
    | InputRoundsExceeded
    | UnusableResult
    | PreflightFailed
    | TaskEnded
): void => {
  const direct = takeDirect(machine, requestId)
  if (direct !== undefined) {
    const delivery = error.delivery
    machine.port.observe?.(direct.method, error._tag, delivery, secondsSince(direct.sentAt), undefined)
    return machine.port.postDirectFailure!(direct.replyTo, error, requestId)
  }
  machine.port.post(Checks.encodeOwnerMessage({ _tag: "Failure", requestId, error }))
}

/** @internal */
export const secondsSince = (sentAt: number): number => (performance.now() - sentAt) / 1000

/** The direct request `requestId` ends: it is no longer this owner's to time or answer. @internal */
export const takeDirect = (machine: Machine, requestId: string): DirectInFlight | undefined => {
  const direct = machine.direct
  if (direct === undefined || direct.requestId !== requestId) return undefined
  machine.direct = undefined
  clearTimeout(direct.timer)
  machine.port.released?.()
  return direct
}

/**
 * Cancels the direct request `requestId` for the host's `cancel`, which answers its caller: counted here as it ends
 * (C80), and no longer this owner's.
 *
 * @internal
 */
export const cancelDirect = (machine: Machine, requestId: string): DirectInFlight | undefined => {
  if (machine.direct?.requestId !== requestId) return undefined
  cancel(machine.state, requestId, "cancelled")
  const direct = takeDirect(machine, requestId)!
  machine.port.observe?.(direct.method, "DeliveryUnknown", "unknown", secondsSince(direct.sentAt), undefined)
  return direct
}

/**
 * Ends the direct request `requestId` without its answer: cancelled at the server, and its caller told the outcome is
 * unknown. Whatever the server answers later is dropped (C13).
 *
 * @internal
 */
export const endDirect = (machine: Machine, requestId: string, reason: "timeout" | "interrupted" | "cancelled") => {
  if (machine.direct?.requestId !== requestId) return false
  cancel(machine.state, requestId, reason)
  const workerId = workerIdOf(machine.state)
  postFailure(machine, requestId, new DeliveryUnknown({ workerId, requestId, reason, delivery: "unknown" }))
  return true
}

/**
 * The client reads only what this has: `aborted`, `reason`, `throwIfAborted()` and one `abort` listener, added once
 * per request and never removed. A Node `AbortController` with that listener costs 13–22 µs to make on Node 20, more
 * than the rest of the owner's own work on a call; this costs well under 1 µs. Aborting is idempotent and runs each
 * listener once.
 *
 * @internal
 */
export class RequestAbort {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> | undefined = undefined

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) (this.listeners ??= []).push(listener)
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1
    if (index !== -1) this.listeners!.splice(index, 1)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners !== undefined) for (const listener of listeners) listener()
  }

  /** What the SDK's request options type it as. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}
