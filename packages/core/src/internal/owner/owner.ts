/**
 * The owner of one connection, wired: to the host's port, and in a thread also to its remote callers. Node's public
 * declarations reach these, so they name nothing of the owner's state, whose types reach the tasks extension's (C98).
 */
import type { McpWorkerError } from "../../McpWorkerError.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Lifecycle from "./lifecycle.js"
import { directHandlers, messageHandler } from "./requests.js"
import { type Machine, makeMachine } from "./state.js"

const ownerOf = (machine: Machine, factory: Owner.TransportFactory): Owner.Owner => ({
  open: (request) => Lifecycle.open(machine, factory, request),
  close: (budgetMs) => Lifecycle.close(machine, budgetMs),
  onMessage: messageHandler(machine)
})

/** `Owner.make`. @internal */
export const make = (options: {
  readonly port: Owner.OwnerPort
  readonly factory: Owner.TransportFactory
}): Owner.Owner => ownerOf(makeMachine(options.port), options.factory)

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

/** A remote thread's request, as the owner reads it off its channel. @internal */
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

/** An owner in a thread, which remote callers reach without the host (Node only). @internal */
export const makeDirect = (options: {
  readonly port: DirectPort
  readonly factory: Owner.TransportFactory
  readonly callerGoneAfterMs: number
}): DirectOwner => {
  const machine = makeMachine(options.port)
  machine.callerGoneAfterMs = options.callerGoneAfterMs
  return { ...ownerOf(machine, options.factory), ...directHandlers(machine) }
}
