/** The owner's one state machine around one SDK `Client`. */
import type { Client } from "@modelcontextprotocol/client"
import * as Data from "effect/Data"
import {
  type DeadlineExceeded,
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
import type { DirectPort } from "./owner.js"
import type * as ParamHeaders from "./paramHeaders.js"
import type * as Tasks from "./tasks.js"
import type * as TasksDispatch from "./tasksDispatch.js"

/** Reported to the host once. @internal */
export interface Failure {
  readonly kind: FailureKind
  readonly message: string
}

/** @internal */
export interface Connection {
  readonly workerId: string
  /** Grows as tokens are obtained. */
  readonly secrets: () => ReadonlyArray<string>
  readonly transport: Owner.OwnerTransport
  readonly client: Client
  readonly inflight: Map<string, RequestAbort>
  /** By progress token (the request id). */
  readonly progress: Map<string, RequestAbort>
  /** C121 */
  readonly idle: Map<string, IdleWatch>
  /** C56, C57: the 2026-07-28 era only. */
  readonly modern: Modern | undefined
  /** For a `callTool` naming no spill policy. */
  readonly spill: string | undefined
  /** C59; `undefined`: every tool. */
  readonly tools: ToolFilter.Compiled | undefined
  /** C72 */
  readonly taskSupport: Tasks.Known
}

/** C121 @internal */
export interface IdleWatch {
  readonly idleMs: number
  timer: ReturnType<typeof setTimeout>
}

/** C57: `subscriptions/listen` reopens when the subscribed URIs change. @internal */
export interface Modern {
  readonly subscribed: Set<string>
  listening: { close(): Promise<void> } | undefined
  /** C62: only Streamable HTTP's requests carry headers. */
  readonly params: ParamHeaders.Known | undefined
  /** C75: for the requests sent beside the client. */
  readonly framing: TasksDispatch.Framing
  /** C53 */
  readonly maxInputRounds: number
}

/** `Opening` and `Closed` keep what the open built, so `close` can end it from any state. @internal */
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

/** @internal */
export type Port = DirectPort

/** @internal */
export interface Machine {
  state: State
  readonly port: Port
  readonly serverRequests: Map<
    string,
    { readonly resolve: (result: unknown) => void; readonly reject: (e: Error) => void }
  >
  nextServerRequest: number
  /** C8, C9: this owner answers it itself. */
  direct: DirectInFlight | undefined
  callerGoneAfterMs: number
}

/** Timed here: no other thread knows of it. @internal */
export interface DirectInFlight {
  readonly replyTo: OwnerProtocol.ReplyTo
  readonly requestId: string
  readonly method: OwnerProtocol.Method
  /** `performance.now()` */
  readonly sentAt: number
  /** Epoch ms */
  readonly deadline: number
  /** Epoch ms */
  heardAt: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** @internal */
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

/** Reported once, from `Ready`; returns the failure on record. @internal */
export const fail = (machine: Machine, kind: FailureKind, message: string): Failure => {
  const state = machine.state
  if (state._tag !== "Ready") return failureOf(state) ?? { kind, message }
  const failure = { kind, message }
  machine.state = State.Failed({ connection: state.connection, failure })
  machine.port.post({ _tag: "Failed", kind, message, at: new Date().toISOString() })
  return failure
}

/** The recorded failure wins over what the caller saw. @internal */
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

/** C8: decided here for every caller. @internal */
export const busyWith = (connection: Connection): string | undefined => {
  for (const requestId of connection.inflight.keys()) return requestId
  return undefined
}

/** An id no longer in flight changes nothing. @internal */
export const cancel = (state: State, requestId: string, reason: string): boolean => {
  const inflight = inflightOf(state)
  const controller = inflight?.get(requestId)
  if (inflight === undefined || controller === undefined) return false
  inflight.delete(requestId)
  controller.abort(reason)
  return true
}

/** @internal */
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
    | DeadlineExceeded
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

/** @internal */
export const takeDirect = (machine: Machine, requestId: string): DirectInFlight | undefined => {
  const direct = machine.direct
  if (direct === undefined || direct.requestId !== requestId) return undefined
  machine.direct = undefined
  clearTimeout(direct.timer)
  machine.port.released?.()
  return direct
}

/** For the host's `cancel`, which answers the caller; counted here (C80). @internal */
export const cancelDirect = (machine: Machine, requestId: string): DirectInFlight | undefined => {
  if (machine.direct?.requestId !== requestId) return undefined
  cancel(machine.state, requestId, "cancelled")
  const direct = takeDirect(machine, requestId)!
  machine.port.observe?.(direct.method, "DeliveryUnknown", "unknown", secondsSince(direct.sentAt), undefined)
  return direct
}

/** C13 @internal */
export const endDirect = (machine: Machine, requestId: string, reason: "timeout" | "interrupted" | "cancelled") => {
  if (machine.direct?.requestId !== requestId) return false
  cancel(machine.state, requestId, reason)
  const workerId = workerIdOf(machine.state)
  postFailure(machine, requestId, new DeliveryUnknown({ workerId, requestId, reason, delivery: "unknown" }))
  return true
}

/** Cheaper than a Node `AbortController` (13–22 µs to make; this under 1 µs). @internal */
export class RequestAbort {
  aborted = false
  reason: unknown = undefined
  /** C175: the owner's deadline for a host's request. */
  deadline: ReturnType<typeof setTimeout> | undefined = undefined
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

  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}
