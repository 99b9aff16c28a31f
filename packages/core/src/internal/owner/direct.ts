/** Remote callers' requests an owner thread takes itself. */
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

/** @internal */
export interface DirectHooks {
  /** `envelope`: `result` is the server's whole response line. */
  readonly postDirect: (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean, requestId: string) => void
  /** Absent for a refusal. */
  readonly postDirectFailure: (
    replyTo: OwnerProtocol.ReplyTo,
    error: McpWorkerError,
    requestId: string | undefined
  ) => void
  readonly taken: (requestId: string, method: OwnerProtocol.Method) => void
  readonly released: () => void
  /** C80: the owner counts what the host never sees. */
  readonly observe: (
    method: OwnerProtocol.Method,
    outcome: string,
    delivery: "delivered" | "not_sent" | "unknown",
    seconds: number | undefined,
    spilled: number | undefined
  ) => void
  /** Before a `Sync` is answered, so batched counts are in. */
  readonly flush: () => void
  /** C83 */
  readonly spanOf: (requestId: string) => OwnerProtocol.TraceContext | undefined
}

/** @internal */
export type DirectPort = Owner.OwnerPort & { readonly [K in keyof DirectHooks]?: DirectHooks[K] | undefined }

/** @internal */
export interface DirectRequest extends Omit<typeof OwnerProtocol.Envelope.Type, "progress"> {
  readonly from: string
  readonly callId: number
  readonly thread?: number | undefined
}

/** @internal */
export interface DirectOwner extends Owner.Owner {
  /** Never throws. */
  readonly startDirect: (request: DirectRequest) => void
  readonly interruptDirect: (from: string, callId: number) => void
  readonly heard: (from: string) => void
}

/** @internal */
export const make = (options: {
  readonly port: DirectPort
  readonly factory: Owner.TransportFactory
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

// C8, C9, C12
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
  // C9, C22a: the deadline passed in transit.
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

// One timer: the deadline (C9, C10) or caller silence (C11, C22), whichever comes first.
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

// C8: on the request's own channel, so it cannot overtake it.
const interruptDirect = (machine: Machine, from: string, callId: number): void => {
  const direct = machine.direct
  if (direct === undefined || direct.replyTo.channel !== from || direct.replyTo.callId !== callId) return
  endDirect(machine, direct.requestId, "interrupted")
}
