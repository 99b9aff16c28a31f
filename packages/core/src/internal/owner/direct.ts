/**
 * Remote callers' requests that reach an owner thread straight from the caller's thread, on the owner's own channel:
 * the owner decides busy, names the request and tells the host (`Started`) before sending it, and posts its success
 * back to the caller itself. Only the Node owner runtime builds an owner with these; the public `Owner` has none of
 * them.
 */
import {
  DeadlineExceeded,
  DeliveryUnknown,
  InvalidInput,
  type McpWorkerError,
  WorkerBusy
} from "../../McpWorkerError.js"
import type * as Owner from "../../Owner.js"
import type * as OwnerProtocol from "../../OwnerProtocol.js"
import * as JsonValue from "../../JsonValue.js"
import * as WorkerId from "../../WorkerId.js"
import { maxTimeoutMs } from "../config/normalize.js"
import { ownerOf } from "./owner.js"
import { send } from "./requests.js"
import {
  busyWith,
  cancel,
  connectionGone,
  inflightOf,
  type Machine,
  makeMachine,
  postFailure,
  workerIdOf
} from "./state.js"

/**
 * What an owner thread adds to its port to answer remote callers itself.
 *
 * @internal
 */
export interface DirectHooks {
  /**
   * Posts the success of a request that names a `replyTo` straight to that caller: `result` is JSON text, the result
   * itself or (`envelope`) the server's whole response line. The host is then told `Delivered`. Without it (an
   * owner process, which has no channel to other threads), every success goes to the host.
   */
  readonly postDirect: (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean) => void
  /**
   * Refuses a remote caller's request that reached the owner directly (`startDirect`) on that caller's own channel:
   * busy, not ready, past its deadline, or unreadable. Nothing was sent.
   */
  readonly postDirectFailure: (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) => void
  /**
   * Handles at once the host's messages already waiting on the data port. Run before a remote caller's request is
   * refused as busy: the host may have ended the request in flight (a timeout, a `cancel`) and told the caller so,
   * whose next request then travels on another channel and can be read first.
   */
  readonly readAhead: () => void
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
export interface DirectRequest {
  /** The caller's reply channel, and the call's number there. */
  readonly from: string
  readonly callId: number
  readonly method: OwnerProtocol.Method
  /** JSON text of a plain object, checked in the calling thread. */
  readonly params: string
  /** The caller's deadline, `Date.now()` epoch ms (one clock for every thread of the process). */
  readonly deadline: number
  readonly saveTo?: string | undefined
  /** The call's own spill directory (`onTooLarge`), or `false` for none. */
  readonly spill?: string | false | undefined
  /** The caller's span, when it traces: the server's parent, through the owner's span of it (C83). */
  readonly trace?: OwnerProtocol.TraceContext | undefined
}

/**
 * An owner that also takes remote callers' requests directly.
 *
 * @internal
 */
export interface DirectOwner extends Owner.Owner {
  /** Takes or refuses a remote caller's request that reached this owner thread directly. Never throws. */
  readonly startDirect: (request: DirectRequest) => void
  /** The remote caller of `callId` stopped waiting: its request, if still in flight, is cancelled at the server. */
  readonly interruptDirect: (from: string, callId: number) => void
}

/**
 * Creates the owner of one connection in an owner thread. Each hook is optional: an owner process has none of them,
 * and a thread whose data port cannot be read ahead has no `readAhead`.
 *
 * @internal
 */
export const make = (options: { readonly port: DirectPort; readonly factory: Owner.TransportFactory }): DirectOwner => {
  const machine = makeMachine(options.port)
  return {
    ...ownerOf(machine, options.factory),
    startDirect: (request) => startDirect(machine, request),
    interruptDirect: (from, callId) => interruptDirect(machine, from, callId)
  }
}

/**
 * A remote caller's request, straight from its thread: refused on its own channel (nothing sent), or named, announced
 * to the host (`Started`, before anything is written to the server) and sent with the success going back to the
 * caller directly.
 */
const startDirect = (machine: Machine, request: DirectRequest): void => {
  const replyTo = { channel: request.from, callId: request.callId }
  const refuse = (error: McpWorkerError) => machine.port.postDirectFailure?.(replyTo, error)
  let state = machine.state
  if (state._tag === "Ready" && busyWith(state.connection) !== undefined) {
    // The host may have ended the request in flight and told its caller so: its `Cancel` waits on the data port.
    machine.port.readAhead?.()
    state = machine.state
  }
  if (state._tag !== "Ready") {
    return refuse(connectionGone(state, "not_sent", "closing", "the connection is not ready"))
  }
  const { connection } = state
  const { workerId } = connection
  const busy = busyWith(connection)
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
  machine.direct = { from: request.from, callId: request.callId, requestId }
  machine.started++
  machine.port.post({ _tag: "Started", requestId, method: request.method, replyTo, deadline: request.deadline })
  send(
    machine,
    connection,
    {
      requestId,
      method: request.method,
      timeoutMs: Math.min(left, maxTimeoutMs),
      saveTo: request.saveTo,
      spill: request.spill,
      progress: undefined,
      replyTo,
      trace: request.trace
    },
    params
  )
}

const parseParams = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return JsonValue.isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

// The caller's interruption arrives on the same channel as its request, so it cannot overtake it. The host, told by
// the failure, answers the caller.
const interruptDirect = (machine: Machine, from: string, callId: number): void => {
  const direct = machine.direct
  if (direct === undefined || direct.from !== from || direct.callId !== callId) return
  machine.direct = undefined
  const { requestId } = direct
  if (inflightOf(machine.state)?.has(requestId) !== true) return
  cancel(machine.state, requestId, "interrupted")
  postFailure(
    machine.port,
    requestId,
    new DeliveryUnknown({ workerId: workerIdOf(machine.state), requestId, reason: "interrupted", delivery: "unknown" })
  )
}
