/**
 * C121: kept where the server's progress is read.
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

/** @internal */
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

/** @internal */
export const progressed = (machine: Machine, connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  clearTimeout(idle.timer)
  idle.timer = setTimeout(onIdle, idle.idleMs, machine, requestId)
}

/** @internal */
export const ended = (connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  connection.idle.delete(requestId)
  clearTimeout(idle.timer)
}

const onIdle = (machine: Machine, requestId: string): void => {
  // C10: as at the deadline.
  if (endDirect(machine, requestId, "timeout")) return
  if (!cancel(machine.state, requestId, "timeout")) return
  const workerId = workerIdOf(machine.state)
  postFailure(machine, requestId, new DeliveryUnknown({ workerId, requestId, reason: "timeout", delivery: "unknown" }))
}
