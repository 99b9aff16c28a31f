/**
 * The owner runtime: one Owner (MCP SDK client) served through the platform Worker runner (control plane) and
 * the dedicated data port. Loaded by the owner thread's entry after it started the server process.
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Owner from "@mcp-worker/core/Owner"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "./processStart.js"
import type * as RemoteProtocol from "./remoteProtocol.js"
import * as ReplyChannels from "./replyChannels.js"
import { makeFactory } from "./transportFactory.js"

/** The owner's end of its data plane: a `MessagePort` in a thread, a `LinePort` in a process. @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
  readonly close: () => void
}

/** Remote reply channels an owner thread keeps open (a worker is rarely used from more threads at once). */
const maxReplyChannels = 16

/**
 * The owner thread's end of the direct replies (`OwnerProtocol.ReplyTo`): a success posted on the caller's reply
 * channel, as `remoteProtocol.Result`. The channels close with the thread.
 */
const makeDirect = () => {
  const channels = ReplyChannels.make(maxReplyChannels)
  const post = (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean) => {
    const message: RemoteProtocol.Result = { _tag: "Result", callId: replyTo.callId, result, envelope }
    channels.get(replyTo.channel).postMessage(message)
  }
  return { post, close: channels.close }
}

/**
 * Runs the owner on its data port. `direct`: this is an owner thread, which can post to other threads' channels and
 * so answers remote callers itself; an owner process cannot.
 *
 * @internal
 */
export const run = (port: DataPort, early: ProcessStart.StartedProcess | undefined, direct = false): void => {
  const factory = makeFactory(early)
  const replies = direct ? makeDirect() : undefined
  const owner = Owner.make({
    port: { post: (message) => port.postMessage(message), postDirect: replies?.post },
    factory: factory.make
  })
  port.on("message", owner.onMessage)

  const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
    Open: (request) => owner.open(request),
    Close: ({ budgetMs }) => owner.close(budgetMs).pipe(Effect.ensuring(Effect.sync(() => port.close())))
  })

  // When the host ends the runner, nothing of this thread may keep its event loop alive.
  Effect.runFork(
    WorkerRunner.launch(main).pipe(
      Effect.provide(NodeWorkerRunner.layer),
      Effect.ensuring(
        Effect.sync(() => {
          port.close()
          replies?.close()
          factory.discard()
        })
      ),
      Effect.orDie
    )
  )
}
