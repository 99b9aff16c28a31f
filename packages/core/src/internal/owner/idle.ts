/**
 * A request's idle budget (C121): the owner, which reads the server's progress, ends a request that went its `idleMs`
 * without a `notifications/progress` as a timeout — cancelled at the server, answered `DeliveryUnknown{timeout}` —
 * whoever runs the request's whole budget.
 *
 * @internal
 */
import { DeliveryUnknown } from "../../McpWorkerError.js"
import {
  cancel,
  type Connection,
  endDirect,
  type Machine,
  postFailure,
  type RequestAbort,
  workerIdOf
} from "./state.js"

/** Arms `requestId`'s idle timer; the request's end (its `controller` aborted, or `ended`) stops it. @internal */
export const watch = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  idleMs: number,
  controller: RequestAbort
): void => {
  connection.idle.set(requestId, { idleMs, timer: setTimeout(onIdle, idleMs, machine, requestId) })
  controller.addEventListener("abort", () => ended(connection, requestId))
}

/** A progress notification of `requestId` arrived: its idle wait starts anew. @internal */
export const progressed = (machine: Machine, connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  clearTimeout(idle.timer)
  idle.timer = setTimeout(onIdle, idle.idleMs, machine, requestId)
}

/** `requestId` ended: its idle timer stops. @internal */
export const ended = (connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  connection.idle.delete(requestId)
  clearTimeout(idle.timer)
}

const onIdle = (machine: Machine, requestId: string): void => {
  // As at the deadline (C10): exactly this request is cancelled at the server, and the worker stays ready.
  if (endDirect(machine, requestId, "timeout")) return
  if (!cancel(machine.state, requestId, "timeout")) return
  const workerId = workerIdOf(machine.state)
  postFailure(machine, requestId, new DeliveryUnknown({ workerId, requestId, reason: "timeout", delivery: "unknown" }))
}
