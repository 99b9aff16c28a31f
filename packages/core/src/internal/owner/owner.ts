/** The owner of one connection, wired. */
import type * as Owner from "../../protocol/Owner.js"
import * as Lifecycle from "./lifecycle.js"
import { messageHandler } from "./requests.js"
import { type Machine, makeMachine } from "./state.js"

/** @internal */
export const ownerOf = (machine: Machine, factory: Owner.TransportFactory): Owner.Owner => ({
  open: (request) => Lifecycle.open(machine, factory, request),
  close: (budgetMs) => Lifecycle.close(machine, budgetMs),
  onMessage: messageHandler(machine)
})

/** `Owner.make`. @internal */
export const make = (options: {
  readonly port: Owner.OwnerPort
  readonly factory: Owner.TransportFactory
}): Owner.Owner => ownerOf(makeMachine(options.port), options.factory)
