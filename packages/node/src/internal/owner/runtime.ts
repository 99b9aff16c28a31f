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
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Tracer from "effect/Tracer"
import { BroadcastChannel, MessagePort, receiveMessageOnPort } from "node:worker_threads"
import type * as ProcessStart from "../job/start.js"
import * as RemoteCodec from "../wire/remoteCodec.js"
import * as RemoteProtocol from "../wire/remoteProtocol.js"
import * as ReplyChannels from "../wire/replyChannels.js"
import { makeFactory } from "../transport/factory.js"
import * as Traced from "../shared/traced.js"

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
      .postMessage(RemoteCodec.encodeReply({ _tag: "RemoteFailure", callId: replyTo.callId, error }))
  const defect = (channel: string, callId: number, message: string) =>
    channels.get(channel).postMessage({ _tag: "Defect", callId, message })
  return { post, fail, defect, close: channels.close }
}

/**
 * Listens on the worker's own channel for remote callers' requests (`remoteProtocol.Direct`) once the connection is
 * ready, until the worker closes. What cannot be read is answered, when it says where, as a defect.
 */
const listen = (
  workerId: string,
  owner: Owner.Owner,
  replies: ReturnType<typeof makeDirect>,
  spans: OwnerSpans | undefined
) => {
  const channel = new BroadcastChannel(RemoteProtocol.ownerChannel(workerId))
  channel.unref()
  channel.onmessage = (event) => {
    const decoded = RemoteCodec.decodeOwnerChannelMessage((event as MessageEvent).data)
    if (Either.isRight(decoded)) {
      const message = decoded.right
      if (message._tag !== "Direct") return owner.interruptDirect(message.from, message.callId)
      return spans === undefined || message.trace === undefined
        ? owner.startDirect(message)
        : spans.direct(message.trace, () => owner.startDirect(message))
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
const readAhead = (port: MessagePort, onMessage: (message: unknown) => void) => () => {
  for (;;) {
    const received = receiveMessageOnPort(port)
    if (received === undefined) return
    onMessage(received.message)
  }
}

/**
 * The owner's spans of the requests whose caller was tracing (they carry its span's context, `trace`), in an owner
 * thread whose runtime has a tracer: each opened as the child of the caller's span when the request arrives, and ended
 * when the owner posts its end. Followed on the data plane's messages, so the owner itself knows nothing of tracing.
 */
interface OwnerSpans {
  /** A message from the host, before the owner handles it. */
  readonly received: (message: unknown) => void
  /** A message to the host, as it is posted (a remote caller's span travels with the `Started` of its request). */
  readonly posted: (message: OwnerProtocol.OwnerMessageEncoded) => OwnerProtocol.OwnerMessageEncoded
  /** Runs the owner's handling of a remote caller's request that carries its span. */
  readonly direct: (trace: OwnerProtocol.TraceContext, handle: () => void) => void
  /** A remote caller's request that reached this thread directly was refused. */
  readonly refused: (error: McpWorkerError) => void
  readonly opened: (workerId: string) => void
  readonly close: () => void
}

const makeSpans = (tracing: Traced.Tracing): OwnerSpans => {
  const spans = new Map<string, Tracer.Span>()
  let workerId = ""
  let direct: OwnerProtocol.TraceContext | undefined
  const start = (trace: OwnerProtocol.TraceContext, method: string, isDirect: boolean) =>
    Traced.startSpan(tracing, "Owner.request", trace, { workerId, method, direct: isDirect })
  const end = (requestId: string, exit: Exit.Exit<unknown, unknown>) => {
    const span = spans.get(requestId)
    if (span === undefined) return
    spans.delete(requestId)
    Traced.endSpan(tracing, span, exit)
  }
  return {
    received: (message) => {
      const raw = message as { _tag?: unknown; requestId?: unknown; method?: unknown; trace?: unknown } | null
      if (typeof raw?.requestId !== "string") return
      if (raw._tag === "Cancel") return end(raw.requestId, Exit.interrupt(FiberId.none))
      const decoded =
        raw._tag === "Request" && raw.trace !== undefined ? OwnerProtocol.decodeHostMessage(raw) : undefined
      if (decoded === undefined || Either.isLeft(decoded) || decoded.right._tag !== "Request") return
      const request = decoded.right
      if (request.trace !== undefined) spans.set(request.requestId, start(request.trace, request.method, false))
    },
    posted: (message) => {
      switch (message._tag) {
        case "Started": {
          if (direct === undefined) return message
          spans.set(message.requestId, start(direct, message.method, true))
          return { ...message, trace: direct }
        }
        case "Success":
        case "Delivered":
          end(message.requestId, Exit.void)
          return message
        case "Failure":
          end(message.requestId, Exit.fail(message.error))
          return message
        case "CancelAnswer":
          if (message.cancelled) end(message.requestId, Exit.interrupt(FiberId.none))
          return message
        default:
          return message
      }
    },
    direct: (trace, handle) => {
      direct = trace
      try {
        handle()
      } finally {
        direct = undefined
      }
    },
    refused: (error) => {
      if (direct !== undefined) Traced.endSpan(tracing, start(direct, "", true), Exit.fail(error))
    },
    opened: (id) => {
      workerId = id
    },
    close: () => {
      for (const requestId of Array.from(spans.keys())) end(requestId, Exit.interrupt(FiberId.none))
    }
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
  // Decided once: an owner without a tracer handles every message as if tracing did not exist.
  const tracing = Traced.threadTracing()
  const spans = tracing === undefined ? undefined : makeSpans(tracing)
  const owner: Owner.Owner = Owner.make({
    port: {
      post:
        spans === undefined
          ? (message) => port.postMessage(message)
          : (message) => port.postMessage(spans.posted(message)),
      postDirect: replies?.post,
      postDirectFailure:
        replies === undefined || spans === undefined
          ? replies?.fail
          : (replyTo, error) => {
              spans.refused(error)
              replies.fail(replyTo, error)
            },
      readAhead: direct && port instanceof MessagePort ? () => ahead() : undefined
    },
    factory: factory.make
  })
  const onMessage =
    spans === undefined
      ? owner.onMessage
      : (message: unknown) => {
          spans.received(message)
          owner.onMessage(message)
        }
  const ahead = port instanceof MessagePort ? readAhead(port, onMessage) : () => {}
  port.on("message", onMessage)
  // Remote callers reach an owner thread directly once its connection is ready; not once it closes.
  let stopListening: (() => void) | undefined
  const stop = () => {
    stopListening?.()
    stopListening = undefined
  }

  const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
    Open: (request) => {
      spans?.opened(request.workerId)
      return replies === undefined
        ? owner.open(request)
        : Effect.tap(owner.open(request), () =>
            Effect.sync(() => {
              stopListening = listen(request.workerId, owner, replies, spans)
            })
          )
    },
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
          spans?.close()
          replies?.close()
          factory.discard()
        })
      ),
      Effect.orDie
    )
  )
}
