/**
 * The owner of one connection, wired: its machine, the control-plane handlers and the data-plane message handler.
 */
import * as Either from "effect/Either"
import type * as Owner from "../../Owner.js"
import * as Checks from "../ownerProtocol/checks.js"
import * as Lifecycle from "./lifecycle.js"
import { startRequest } from "./requests.js"
import { onServerReply } from "./serverRequests.js"
import { cancel, endDirect, type Machine, makeMachine } from "./state.js"

/** Handles one raw data-plane message from the host. Never throws. @internal */
export const onMessage = (machine: Machine, raw: unknown): void => {
  const decoded = Checks.decodeHostMessage(raw)
  if (Either.isLeft(decoded)) return
  const message = decoded.right
  switch (message._tag) {
    case "Request":
      return startRequest(machine, message)
    case "Cancel": {
      // A `cancel` from the host of a request taken directly: its caller is answered here (C12).
      const cancelled =
        endDirect(machine, message.requestId, message.reason) ||
        cancel(machine.state, message.requestId, message.reason)
      if (message.confirm === true) machine.port.post({ _tag: "CancelAnswer", requestId: message.requestId, cancelled })
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
