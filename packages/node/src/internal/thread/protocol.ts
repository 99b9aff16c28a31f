// docs/wire.md; names, timings and types are the caller's, proven equal.
import { HostUnavailable, InvalidInput, McpWorkerError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type * as Effect from "effect/Effect"
import * as ThreadCaller from "@mcp-worker/caller/ThreadCaller"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Struct from "effect/Struct"
import { randomBytes } from "node:crypto"
import * as WorkerThreads from "node:worker_threads"
import { BroadcastChannel } from "node:worker_threads"

/** @internal */
export const {
  hostChannel,
  announceChannel,
  replyChannel,
  ownerChannel,
  staleAfterMs,
  ackWithinMs,
  pingEveryMs,
  pingAckWithinMs,
  remoteGoneAfterMs,
  graceMs
} = ThreadCaller.protocol

// C9: absent, the default budget.
const deadline = Schema.optional(Schema.Number)
const workerId = Schema.String

/** @internal */
export const RemoteOpen = Schema.TaggedStruct("RemoteOpen", {
  config: Schema.String,
  deadline,
  isolation: Schema.optional(Schema.Literal("thread", "process")),
  maxOldGenerationSizeMb: Schema.optional(Schema.Number),
  spill: Schema.optional(Schema.String),
  tools: Schema.optional(OwnerProtocol.ToolFilter),
  name: Schema.optional(Schema.String)
})

/** No `deadline`: the worker's default. @internal */
export const RemoteCall = Schema.TaggedStruct("RemoteCall", {
  workerId,
  ...Struct.omit(OwnerProtocol.Envelope.fields, "deadline", "trace"),
  deadline,
  direct: Schema.optional(Schema.Boolean)
})

/** @internal */
export const RemoteStatus = Schema.TaggedStruct("RemoteStatus", { workerId })

/** @internal */
export const RemoteCancel = Schema.TaggedStruct("RemoteCancel", { workerId, requestId: Schema.String })

/** @internal */
export const RemoteClose = Schema.TaggedStruct("RemoteClose", { workerId, deadline })

/** @internal */
export const RemoteEvents = Schema.TaggedStruct("RemoteEvents", {
  workerId,
  subscription: Schema.String,
  capacity: Schema.Number,
  end: Schema.optional(Schema.Boolean)
})

/** @internal */
export const Operation = Schema.Union(RemoteOpen, RemoteCall, RemoteStatus, RemoteCancel, RemoteClose, RemoteEvents)

/** @internal */
export type Operation = typeof Operation.Type

/** @internal */
export type LifecycleOperation = Exclude<Operation, typeof RemoteCall.Type>

/** @internal */
export interface EventsBatch {
  readonly items: ReadonlyArray<McpWorkers.ServerNotification>
  readonly done: boolean
}

/** C25: replies are not decoded against these. @internal */
export interface Answers {
  readonly RemoteOpen: ReturnType<McpWorkers.Lifecycle["open"]>
  readonly RemoteStatus: ReturnType<McpWorkers.Lifecycle["status"]>
  readonly RemoteCancel: ReturnType<McpWorkers.Lifecycle["cancel"]>
  readonly RemoteClose: ReturnType<McpWorkers.Lifecycle["close"]>
  readonly RemoteEvents: Effect.Effect<EventsBatch, Stream.Stream.Error<ReturnType<McpWorkers.Lifecycle["events"]>>>
}

/** @internal */
export type SuccessOf<O extends LifecycleOperation> = Effect.Effect.Success<Answers[O["_tag"]]>

/** @internal */
export type FailureOf<O extends LifecycleOperation> = Effect.Effect.Error<Answers[O["_tag"]]>

/** C22a @internal */
export const RemoteRequest = Schema.TaggedStruct("RemoteRequest", {
  from: Schema.String,
  callId: Schema.Number,
  ackBy: Schema.optional(Schema.Number),
  operation: Operation,
  trace: Schema.optional(OwnerProtocol.TraceContext),
  thread: Schema.optional(Schema.Number)
})

/** C11 @internal */
export const Interrupt = Schema.TaggedStruct("Interrupt", {
  from: Schema.String,
  callId: Schema.Number,
  reply: Schema.Boolean
})

/** @internal */
export const Ping = Schema.TaggedStruct("Ping", { from: Schema.String })

/** @internal */
export const RemoteMessage = Schema.Union(RemoteRequest, Interrupt, Ping)

/** C29 @internal */
export const Direct = Schema.TaggedStruct("Direct", {
  from: Schema.String,
  callId: Schema.Number,
  ...Struct.omit(OwnerProtocol.Envelope.fields, "progress"),
  thread: Schema.optional(Schema.Number)
})

/** @internal */
export type Direct = typeof Direct.Type

/** @internal */
export const OwnerChannelMessage = Schema.Union(Direct, Interrupt, Ping)

/** @internal */
export type OwnerChannelMessage = typeof OwnerChannelMessage.Type

/** @internal */
export type RemoteMessage = typeof RemoteMessage.Type

/** @internal */
export type RemoteMessageEncoded = typeof RemoteMessage.Encoded

/** @internal */
export const Ack = Schema.TaggedStruct("Ack", { hostId: Schema.String, callId: Schema.optional(Schema.Number) })

/** @internal */
export const RemoteSuccess = Schema.TaggedStruct("RemoteSuccess", { callId: Schema.Number, value: Schema.Unknown })

/** @internal */
export const Result = Schema.TaggedStruct("Result", {
  callId: Schema.Number,
  result: Schema.String,
  envelope: Schema.Boolean
})

/** @internal */
export type Result = typeof Result.Type

/** @internal */
export const RemoteFailure = Schema.TaggedStruct("RemoteFailure", { callId: Schema.Number, error: McpWorkerError })

/** @internal */
export const Defect = Schema.TaggedStruct("Defect", { callId: Schema.Number, message: Schema.String })

/** @internal */
export const RemoteProgress = Schema.TaggedStruct("RemoteProgress", {
  callId: Schema.Number,
  progress: OwnerProtocol.Progress
})

/** @internal */
export const Route = Schema.TaggedStruct("Route", {
  workerId: Schema.String,
  channel: Schema.String,
  timeoutMs: Schema.Number,
  traced: Schema.optional(Schema.Boolean)
})

/** C22a @internal */
export const WorkerEnded = Schema.TaggedStruct("WorkerEnded", { workerId: Schema.String, error: McpWorkerError })

/** @internal */
export const Unrouted = Schema.TaggedStruct("Unrouted", { workerId: Schema.String })

/** @internal */
export const Reply = Schema.Union(
  Ack,
  RemoteSuccess,
  Result,
  RemoteFailure,
  Defect,
  RemoteProgress,
  Route,
  WorkerEnded,
  Unrouted
)

/** @internal */
export type Reply = typeof Reply.Type

/** Of two hosts in one process the newest serves. @internal */
export const Up = Schema.TaggedStruct("Up", { hostId: Schema.String, startedAt: Schema.Number })

/** @internal */
export const Gone = Schema.TaggedStruct("Gone", { hostId: Schema.String })

/** @internal */
export const Announcement = Schema.Union(Up, Gone)

/** @internal */
export type Announcement = typeof Announcement.Type

/** 96 bits. @internal */
export const randomId = (): string => randomBytes(12).toString("base64url")

/** @internal */
export const unrefChannel = (name: string): BroadcastChannel => {
  const channel = new BroadcastChannel(name)
  channel.unref()
  return channel
}

/** @internal */
export const afterHostClosed = (operation: Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message: "the mcp-worker host of this process has closed: build NodeMcpWorkers.layer() again to open workers"
      })
    : new UnknownWorker({ workerId: operation.workerId })

/** C22a: read past its `ackBy`. @internal */
export const arrivedLate = (): HostUnavailable =>
  new HostUnavailable({
    message:
      `the mcp-worker host was blocked for more than ${ackWithinMs} ms and could not acknowledge the request in ` +
      "time; it was not sent"
  })

/** @internal */
export const invalidArguments = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

// Fast checks derived from the Schemas; the Schema only for what they miss.

const decodeRemoteMessageSchema = OwnerProtocol.safeDecoder(RemoteMessage)

const decodeReplySchema = OwnerProtocol.safeDecoder(Reply)

const decodeOwnerChannelSchema = OwnerProtocol.safeDecoder(OwnerChannelMessage)

/** @internal */
export const decodeOwnerChannelMessage = (raw: unknown): Either.Either<OwnerChannelMessage, ParseResult.ParseError> =>
  isPlainDirect(raw) ? Either.right(raw) : decodeOwnerChannelSchema(raw)

/** @internal */
export const decodeRemoteMessage = (raw: unknown): Either.Either<RemoteMessage, ParseResult.ParseError> =>
  isPlainCallRequest(raw) ? Either.right(raw) : decodeRemoteMessageSchema(raw)

/** @internal */
export const decodeReply = (raw: unknown): Either.Either<Reply, ParseResult.ParseError> =>
  isPlainResult(raw) ? Either.right(raw) : decodeReplySchema(raw)

const isPlainCallRequest = OwnerProtocol.fastCheck(Schema.Struct({ ...RemoteRequest.fields, operation: RemoteCall }))

const isPlainDirect = OwnerProtocol.fastCheck(Direct)

const isPlainResult = OwnerProtocol.fastCheck(Result)

/** @internal */
export const encodeReply = Schema.encodeSync(Reply)

/** @internal */
export const decodeAnnouncement = OwnerProtocol.safeDecoder(Announcement)

// Past the bound the oldest sink closes; none keeps its thread alive.
/** @internal */
export interface ReplySink {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
}

/** @internal */
export interface ReplyChannels {
  readonly get: (name: string, thread?: number | undefined) => ReplySink
  readonly close: () => void
}

const channelSink = (name: string): ReplySink => {
  const channel = new WorkerThreads.BroadcastChannel(name)
  channel.unref()
  return channel
}

/**
 * C150; `undefined` in this thread or without `postMessageToThread`. The main thread relays a worker thread's handover
 * and may be blocked (C22): unconfirmed replies then also go on the channel, so only for replies read by call id.
 *
 * @internal
 */
export const openReplyPort = (
  to: string,
  thread: number | undefined,
  fallbackAfterMs?: number | undefined
): ReplySink | undefined => {
  // Nodes before 22.5 lack `postMessageToThread`.
  const { postMessageToThread, isMainThread } = WorkerThreads
  if (thread === undefined || thread === WorkerThreads.threadId || typeof postMessageToThread !== "function") {
    return undefined
  }
  if (!isMainThread && fallbackAfterMs === undefined) return undefined
  const { port1, port2 } = new WorkerThreads.MessageChannel()
  const handover = postMessageToThread(thread, { _tag: "ReplyPort", to, port: port2 }, [port2])
  if (isMainThread) {
    handover.catch(() => port1.close())
    return port1
  }
  return confirmed(to, port1, handover, fallbackAfterMs!)
}

const confirmed = (
  to: string,
  port: WorkerThreads.MessagePort,
  handover: Promise<void>,
  fallbackAfterMs: number
): ReplySink => {
  let state: "handing over" | "port" | "channel" = "handing over"
  let unconfirmed: Array<unknown> = []
  let channel: ReplySink | undefined
  const onChannel = (message: unknown) => (channel ??= channelSink(to)).postMessage(message)
  const fallBack = () => {
    if (state !== "handing over") return
    state = "channel"
    for (const message of unconfirmed) onChannel(message)
    unconfirmed = []
  }
  const timer = setTimeout(fallBack, fallbackAfterMs)
  timer.unref()
  handover.then(
    () => {
      clearTimeout(timer)
      state = "port"
      unconfirmed = []
    },
    () => {
      clearTimeout(timer)
      fallBack()
      port.close()
    }
  )
  return {
    postMessage: (message) => {
      if (state === "channel") return onChannel(message)
      port.postMessage(message)
      if (state === "handing over") unconfirmed.push(message)
    },
    close: () => {
      clearTimeout(timer)
      port.close()
      channel?.close()
    }
  }
}

const ownerFallbackMs = 100

const openSink = (name: string, thread: number | undefined): ReplySink =>
  openReplyPort(name, thread, ownerFallbackMs) ?? channelSink(name)

/** @internal */
export const bounded = <Sink extends ReplySink | undefined>(
  max: number,
  open: (name: string, thread: number | undefined) => Sink
) => {
  const sinks = new Map<string, ReplySink>()
  return {
    get: (name: string, thread?: number | undefined): Sink => {
      const known = sinks.get(name)
      if (known !== undefined) return known as Sink
      const sink = open(name, thread)
      if (sink === undefined) return sink
      sinks.set(name, sink)
      if (sinks.size > max) {
        const [oldest, evicted] = sinks.entries().next().value!
        evicted.close()
        sinks.delete(oldest)
      }
      return sink
    },
    peek: (name: string): ReplySink | undefined => sinks.get(name),
    close: () => {
      for (const sink of sinks.values()) sink.close()
      sinks.clear()
    }
  }
}

/** @internal */
export const makeReplyChannels = (max: number): ReplyChannels => bounded(max, openSink)
