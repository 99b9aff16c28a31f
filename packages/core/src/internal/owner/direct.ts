/**
 * Remote callers' requests that reach an owner thread straight from the caller's thread, on the owner's own channel:
 * the owner decides busy, names the request, runs its budget and answers the caller itself; the host never learns of
 * it. Only the Node owner runtime builds an owner with these; the public `Owner` has none of
 * them.
 */
import {
  DeadlineExceeded,
  InvalidInput,
  type McpWorkerError,
  WorkerBusy,
  type WorkerFailed
} from "../../McpWorkerError.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as JsonValue from "../../JsonValue.js"
import * as WorkerId from "../../WorkerId.js"
import { maxTimeoutMs } from "../config/normalize.js"
import { ownerOf } from "./owner.js"
import { send } from "./requests.js"
import { busyWith, connectionGone, type DirectInFlight, endDirect, type Machine, makeMachine } from "./state.js"

/**
 * What an owner thread adds to its port to answer remote callers itself.
 *
 * @internal
 */
export interface DirectHooks {
  /**
   * Posts the success of a request taken directly straight to its caller: `result` is JSON text, the result itself or
   * (`envelope`) the server's whole response line. Without it (an owner process, which has no channel to other
   * threads), every answer goes to the host.
   */
  readonly postDirect: (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean, requestId: string) => void
  /**
   * Posts the failure of a request taken directly on its caller's own channel; `requestId` is absent for a refusal
   * (nothing sent, the request never named).
   */
  readonly postDirectFailure: (
    replyTo: OwnerProtocol.ReplyTo,
    error: McpWorkerError,
    requestId: string | undefined
  ) => void
  /** A remote caller's request was taken directly and named, and is about to be sent. */
  readonly taken: (requestId: string, method: OwnerProtocol.Method) => void
  /** The request taken directly has ended, however it ended: it is no longer this owner's. */
  readonly released: () => void
  /**
   * Counts a request taken directly as it ends (C80): `outcome` is `result`, `is_error` or the error's tag; `seconds`
   * is absent for a refusal, which was never sent. The host never sees these requests, so the owner reports them.
   */
  readonly observe: (
    method: OwnerProtocol.Method,
    outcome: string,
    delivery: "delivered" | "not_sent" | "unknown",
    seconds: number | undefined,
    spilled: number | undefined
  ) => void
  /** Posts what the owner holds back in batches (its `observe` counts) before it answers a `Sync`. */
  readonly flush: () => void
  /**
   * The owner's own span of a request, when its runtime traces: the parent its server is given in `_meta` (C83).
   * Without it, the caller's span is.
   */
  readonly spanOf: (requestId: string) => OwnerProtocol.TraceContext | undefined
}

/**
 * The port of an owner thread: the host's, and the hooks it has of `DirectHooks`.
 *
 * @internal
 */
export type DirectPort = Owner.OwnerPort & { readonly [K in keyof DirectHooks]?: DirectHooks[K] | undefined }

/**
 * A remote caller's request that reached an owner thread straight from the caller's thread (on the owner's own
 * channel), checked there.
 *
 * @internal
 */
export interface DirectRequest extends Omit<typeof OwnerProtocol.Envelope.Type, "progress"> {
  /** The caller's reply channel, and the call's number there. */
  readonly from: string
  readonly callId: number
  /** The caller's thread, when it takes its replies on a port. */
  readonly thread?: number | undefined
}

/**
 * An owner that also takes remote callers' requests directly.
 *
 * @internal
 */
export interface DirectOwner extends Owner.Owner {
  /** Takes or refuses a remote caller's request that reached this owner thread directly. Never throws. */
  readonly startDirect: (request: DirectRequest) => void
  /**
   * The remote caller of `callId` stopped waiting: its request, if still in flight, is cancelled at the server, and
   * answered `DeliveryUnknown{interrupted}` (read by a caller that still waits, `reply`, else dropped).
   */
  readonly interruptDirect: (from: string, callId: number) => void
  /** The remote caller `from` is alive and waiting (its keep-alive). */
  readonly heard: (from: string) => void
}

/**
 * Creates the owner of one connection in an owner thread. Each hook is optional: an owner process has none of them.
 *
 * @internal
 */
export const make = (options: {
  readonly port: DirectPort
  readonly factory: Owner.TransportFactory
  /** How long a remote caller with a request in flight may go without a word before it is taken for gone. */
  readonly callerGoneAfterMs: number
}): DirectOwner => {
  const machine = makeMachine(options.port)
  machine.callerGoneAfterMs = options.callerGoneAfterMs
  return {
    ...ownerOf(machine, options.factory),
    startDirect: (request) => startDirect(machine, request),
    interruptDirect: (from, callId) => interruptDirect(machine, from, callId),
    heard: (from) => {
      if (machine.direct?.replyTo.channel === from) machine.direct.heardAt = Date.now()
    }
  }
}

/**
 * A remote caller's request, straight from its thread: refused on its own channel (nothing sent), or taken, timed and
 * answered here. No other thread records it: the owner is the one authority on it (C8, C9, C12).
 */
const startDirect = (machine: Machine, request: DirectRequest): void => {
  const { thread } = request
  const replyTo = { channel: request.from, callId: request.callId, ...(thread === undefined ? {} : { thread }) }
  const refuse = (error: McpWorkerError & { readonly delivery: "not_sent" }) => {
    machine.port.observe?.(request.method, error._tag, "not_sent", undefined, undefined)
    machine.port.postDirectFailure?.(replyTo, error, undefined)
  }
  const state = machine.state
  if (state._tag !== "Ready") {
    return refuse(
      connectionGone(state, "not_sent", "closing", "the connection is not ready") as WorkerFailed & {
        readonly delivery: "not_sent"
      }
    )
  }
  const { connection } = state
  const { workerId } = connection
  const busy = machine.direct?.requestId ?? busyWith(connection)
  if (busy !== undefined) return refuse(new WorkerBusy({ workerId, requestId: busy, delivery: "not_sent" }))
  const params = parseParams(request.params)
  if (params === undefined) {
    const message = "the request params must be the JSON text of a plain object"
    return refuse(new InvalidInput({ where: "arguments", path: "params", message, delivery: "not_sent" }))
  }
  const left = request.deadline - Date.now()
  // The deadline passed between the caller's thread and this one: never sent (C9, C22a).
  if (!(left > 0)) return refuse(new DeadlineExceeded({ workerId, delivery: "not_sent" }))
  const requestId = WorkerId.makeRequestId()
  const now = Date.now()
  const direct: DirectInFlight = {
    replyTo,
    requestId,
    method: request.method,
    sentAt: performance.now(),
    deadline: now + Math.min(left, maxTimeoutMs),
    heardAt: now,
    timer: undefined
  }
  machine.direct = direct
  machine.port.taken?.(requestId, request.method)
  watch(machine, direct)
  send(machine, connection, { ...request, requestId, deadline: direct.deadline }, params)
}

/**
 * One timer per direct request, at its deadline or when its caller would have been silent too long, whichever comes
 * first. At the deadline the request ends as `timeout` (C9, C10); a caller silent past `callerGoneAfterMs` (its
 * thread terminated, or blocked that long) has it interrupted, and the answer waits on its channel (C11, C22).
 */
const watch = (machine: Machine, direct: DirectInFlight): void => {
  const at = Math.min(direct.deadline, direct.heardAt + machine.callerGoneAfterMs)
  direct.timer = setTimeout(onWatch, Math.max(0, at - Date.now()), machine, direct)
}

const onWatch = (machine: Machine, direct: DirectInFlight): void => {
  if (machine.direct !== direct) return
  const now = Date.now()
  if (now >= direct.deadline) return void endDirect(machine, direct.requestId, "timeout")
  if (now - direct.heardAt >= machine.callerGoneAfterMs) return void endDirect(machine, direct.requestId, "interrupted")
  watch(machine, direct)
}

const parseParams = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return JsonValue.isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

// The caller's interruption travels on the channel of its request, so it cannot overtake it; and the caller's next
// request travels after it, so it finds the worker free (C8).
const interruptDirect = (machine: Machine, from: string, callId: number): void => {
  const direct = machine.direct
  if (direct === undefined || direct.replyTo.channel !== from || direct.replyTo.callId !== callId) return
  endDirect(machine, direct.requestId, "interrupted")
}
