/**
 * The owner runtime: one Owner (MCP SDK client) served through the platform Worker runner (control plane) and
 * the dedicated data port. Loaded by the owner thread's entry after it started the server process.
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Owner from "@mcp-worker/core/Owner"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import type { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { BroadcastChannel, MessagePort, receiveMessageOnPort } from "node:worker_threads"
import type * as ProcessStart from "../job/start.js"
import * as RemoteProtocol from "../wire/remoteProtocol.js"
import * as ReplyChannels from "../wire/replyChannels.js"
import { makeFactory } from "../transport/factory.js"

/** The owner's end of its data plane: a `MessagePort` in a thread, a `LinePort` in a process. @internal */
export interface OwnerDataPort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
  readonly close: () => void
}

/** Remote reply channels an owner thread keeps open (a worker is rarely used from more threads at once). */
const maxReplyChannels = 16

/**
 * The owner thread's end of the direct replies (`OwnerProtocol.ReplyTo`): a success posted on the caller's reply
 * channel, as `remoteProtocol.Result`, and the refusal of a request that reached this thread directly. The channels
 * close with the thread.
 */
const makeDirect = () => {
  const channels = ReplyChannels.make(maxReplyChannels)
  const post = (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean) => {
    const message: RemoteProtocol.Result = { _tag: "Result", callId: replyTo.callId, result, envelope }
    channels.get(replyTo.channel).postMessage(message)
  }
  const fail = (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) =>
    channels
      .get(replyTo.channel)
      .postMessage(RemoteProtocol.encodeReply({ _tag: "RemoteFailure", callId: replyTo.callId, error }))
  const defect = (channel: string, callId: number, message: string) =>
    channels.get(channel).postMessage({ _tag: "Defect", callId, message })
  return { post, fail, defect, close: channels.close }
}

/**
 * Listens on the worker's own channel for remote callers' requests (`remoteProtocol.Direct`) once the connection is
 * ready, until the worker closes. What cannot be read is answered, when it says where, as a defect.
 */
const listen = (workerId: string, owner: Owner.Owner, replies: ReturnType<typeof makeDirect>) => {
  const channel = new BroadcastChannel(RemoteProtocol.ownerChannel(workerId))
  channel.unref()
  channel.onmessage = (event) => {
    const decoded = RemoteProtocol.decodeOwnerChannelMessage((event as MessageEvent).data)
    if (Either.isRight(decoded)) {
      const message = decoded.right
      return message._tag === "Direct"
        ? owner.startDirect(message)
        : owner.interruptDirect(message.from, message.callId)
    }
    const raw = (event as MessageEvent).data as { from?: unknown; callId?: unknown } | null
    if (typeof raw?.from === "string" && typeof raw.callId === "number") {
      replies.defect(
        raw.from,
        raw.callId,
        "the mcp-worker owner thread could not read the request (another version of mcp-worker?)"
      )
    }
  }
  return () => channel.close()
}

/** Handles at once every host message waiting on the data port of an owner thread. */
const readAhead = (port: MessagePort, owner: Owner.Owner) => () => {
  for (;;) {
    const received = receiveMessageOnPort(port)
    if (received === undefined) return
    owner.onMessage(received.message)
  }
}

/**
 * Runs the owner on its data port. `direct`: this is an owner thread, which can post to other threads' channels and
 * so answers remote callers itself; an owner process cannot.
 *
 * @internal
 */
export const run = (port: OwnerDataPort, early: ProcessStart.StartedProcess | undefined, direct = false): void => {
  const factory = makeFactory(early)
  const replies = direct ? makeDirect() : undefined
  const owner: Owner.Owner = Owner.make({
    port: {
      post: (message) => port.postMessage(message),
      postDirect: replies?.post,
      postDirectFailure: replies?.fail,
      readAhead: direct && port instanceof MessagePort ? () => ahead() : undefined
    },
    factory: factory.make
  })
  const ahead = port instanceof MessagePort ? readAhead(port, owner) : () => {}
  port.on("message", owner.onMessage)
  // Remote callers reach an owner thread directly once its connection is ready; not once it closes.
  let stopListening: (() => void) | undefined
  const stop = () => {
    stopListening?.()
    stopListening = undefined
  }

  const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
    Open: (request) =>
      replies === undefined
        ? owner.open(request)
        : Effect.tap(owner.open(request), () =>
            Effect.sync(() => {
              stopListening = listen(request.workerId, owner, replies)
            })
          ),
    Close: ({ budgetMs }) =>
      Effect.suspend(() => {
        stop()
        return owner.close(budgetMs)
      }).pipe(Effect.ensuring(Effect.sync(() => port.close())))
  })

  // When the host ends the runner, nothing of this thread may keep its event loop alive.
  Effect.runFork(
    WorkerRunner.launch(main).pipe(
      Effect.provide(NodeWorkerRunner.layer),
      Effect.ensuring(
        Effect.sync(() => {
          stop()
          port.close()
          replies?.close()
          factory.discard()
        })
      ),
      Effect.orDie
    )
  )
}
