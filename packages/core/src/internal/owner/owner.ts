/**
 * The owner of one connection, wired: its machine, the control-plane handlers and the data-plane message handler.
 */
import * as Either from "effect/Either"
import type * as Owner from "../../Owner.js"
import * as Checks from "../ownerProtocol/checks.js"
import * as Lifecycle from "./lifecycle.js"
import { startRequest } from "./requests.js"
import { onServerReply } from "./serverRequests.js"
import { cancel, cancelDirect, type Machine, makeMachine } from "./state.js"

/** Handles one raw data-plane message from the host. Never throws. @internal */
export const onMessage = (machine: Machine, raw: unknown): void => {
  const decoded = Checks.decodeHostMessage(raw)
  if (Either.isLeft(decoded)) return
  const message = decoded.right
  switch (message._tag) {
    case "Request":
      return startRequest(machine, message)
    case "Cancel": {
      const { requestId, reason } = message
      if (message.confirm !== true) return void cancel(machine.state, requestId, reason)
      // The host's `cancel` of a request taken directly: the host answers its caller after the `cancel`'s own
      // answer, on the channel both travel, so a Promise caller has its `cancel` resolved first (C12).
      const direct = cancelDirect(machine, requestId)
      if (direct !== undefined) {
        return machine.port.post({ _tag: "CancelAnswer", requestId, cancelled: true, replyTo: direct.replyTo })
      }
      machine.port.post({ _tag: "CancelAnswer", requestId, cancelled: cancel(machine.state, requestId, reason) })
      return
    }
    case "ServerReply":
      return onServerReply(machine, message)
  }
}

/** The owner's handlers over a machine. @internal */
export const ownerOf = (machine: Machine, factory: Owner.TransportFactory): Owner.Owner => ({
  open: (request) => Lifecycle.open(machine, factory, request),
  close: (budgetMs) => Lifecycle.close(machine, budgetMs),
  onMessage: (raw) => onMessage(machine, raw)
})

/** `Owner.make`. @internal */
export const make = (options: {
  readonly port: Owner.OwnerPort
  readonly factory: Owner.TransportFactory
}): Owner.Owner => ownerOf(makeMachine(options.port), options.factory)
