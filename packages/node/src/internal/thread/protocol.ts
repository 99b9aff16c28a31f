/**
 * The protocol between remote threads (`NodeMcpWorkers.layerRemote`, `makePromiseClient`) and the host registry
 * (`NodeMcpWorkers.layer()`) of the same process, over Node's `BroadcastChannel`s: process-wide, addressed by name.
 *
 * - `mcp-worker/v1/host`: remote → host requests. Remotes post on a fresh instance and close it at once, so a
 *   remote thread never receives (and is never woken by) another remote's traffic.
 * - `mcp-worker/v1/reply/<random>`: host → one remote. Only the calling thread is woken by its replies.
 * - `mcp-worker/v1/announce`: host → everyone, rarely: a host started (`Up`) or closed (`Gone`).
 * - `mcp-worker/v1/owner/<workerId>`: remote → one owner thread, directly: the requests of the operation table (and
 *   their interruptions) of a remote that the host gave the worker's `Route`. The owner decides busy, names the
 *   request, runs its budget and answers on the remote's reply channel; the host is not on the way.
 *
 * Only plain data crosses: the worker id, configs and arguments as JSON text (validated in the calling thread),
 * raw MCP results, and tagged errors in their encoded form, decoded back into the same classes.
 *
 * One tag, one message across the code base: the owner protocol has a `Request`, a `Success`, an `Open`… of its own,
 * so this protocol's operations and its request, success, failure and progress messages are `Remote…`.
 *
 * Beside the messages: the reply sinks they are posted to, and the few bytes of shared memory in which an owner thread
 * shows the host the request it took straight from a remote.
 *
 * @internal
 */
import { HostUnavailable, InvalidInput, McpWorkerError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type * as Effect from "effect/Effect"
import * as ThreadCaller from "@mcp-worker/caller/ThreadCaller"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import * as WorkerThreads from "node:worker_threads"
import { BroadcastChannel } from "node:worker_threads"

/**
 * The channel names and timings of the thread plane, the caller's (`ThreadCaller.protocol`, docs/wire.md): a remote
 * asks for an `Ack` when it has not heard from a host for `staleAfterMs` and reports `HostUnavailable` without one
 * after `ackWithinMs` (C22); with calls in flight it pings every `pingEveryMs`; a host that hears nothing of it for
 * `remoteGoneAfterMs` (three pings: a short block of the caller's loop must not cost it its calls) interrupts its
 * calls; a remote stops waiting `graceMs` after a deadline the host did not answer by.
 *
 * @internal
 */
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

/**
 * The caller's budget as an absolute deadline (`Date.now()` epoch ms, one clock for every thread of the process),
 * so that the time a message spends between threads counts against it (C9). Absent: the default budget.
 */
const deadline = Schema.optional(Schema.Number)
const workerId = Schema.String

/** `open`: the config normalized in the calling thread (C18), in its wire form. @internal */
export const RemoteOpen = Schema.TaggedStruct("RemoteOpen", {
  config: Schema.String,
  deadline,
  /** Where the owner runs, checked in the calling thread (`McpWorkers.placementOf`). Absent: a thread. */
  isolation: Schema.optional(Schema.Literal("thread", "process")),
  maxOldGenerationSizeMb: Schema.optional(Schema.Number),
  /** The worker's spill directory (`onTooLarge`), checked in the calling thread. */
  spill: Schema.optional(Schema.String),
  /** Which tools the worker offers, checked in the calling thread (`ToolFilter.check`) and again by the host. */
  tools: Schema.optional(OwnerProtocol.ToolFilter),
  /** The worker's name in the host's metrics and view (`OpenOptions.name`), checked in both threads. */
  name: Schema.optional(Schema.String)
})

/**
 * Any request of the operation table (`listTools`, `callTool`, `readResource`…): `params` is JSON text, checked as
 * JSON plain data in the calling thread.
 *
 * @internal
 */
export const RemoteCall = Schema.TaggedStruct("RemoteCall", {
  workerId,
  method: OwnerProtocol.Method,
  params: Schema.String,
  deadline,
  /** The caller's idle budget in ms (C121), which the owner runs. */
  idleMs: Schema.optional(Schema.Number),
  /** The caller has an `onProgress` callback (it stays in its thread): the host sends it `RemoteProgress` replies. */
  progress: Schema.optional(Schema.Boolean),
  /** `saveTo`, checked in the calling thread: the owner writes the result to this absolute path. */
  saveTo: Schema.optional(Schema.String),
  /** The call's own `onTooLarge`, checked in the calling thread: a spill directory, or `false` for none. */
  spill: Schema.optional(OwnerProtocol.Spill),
  /** The remote reads `Result` replies: the owner thread may post the success to it itself. */
  direct: Schema.optional(Schema.Boolean)
})

/** @internal */
export const RemoteStatus = Schema.TaggedStruct("RemoteStatus", { workerId })

/** @internal */
export const RemoteCancel = Schema.TaggedStruct("RemoteCancel", { workerId, requestId: Schema.String })

/** @internal */
export const RemoteClose = Schema.TaggedStruct("RemoteClose", { workerId, deadline })

/**
 * One pull of an `events` subscription (`subscription`: the remote's random id for it). The first pull subscribes;
 * each is answered with what the host buffered for it, `{ items, done }`, once there is at least one; `end`
 * unsubscribes.
 *
 * @internal
 */
export const RemoteEvents = Schema.TaggedStruct("RemoteEvents", {
  workerId,
  subscription: Schema.String,
  capacity: Schema.Number,
  end: Schema.optional(Schema.Boolean)
})

/** One operation of `McpWorkers`, as data. @internal */
export const Operation = Schema.Union(RemoteOpen, RemoteCall, RemoteStatus, RemoteCancel, RemoteClose, RemoteEvents)

/** @internal */
export type Operation = typeof Operation.Type

/** An operation other than a request of the table: its answer is that of the `McpWorkers` operation it stands for. */
export type LifecycleOperation = Exclude<Operation, typeof RemoteCall.Type>

/** What one pull of an `events` subscription is answered with: what was buffered, and whether it has ended. @internal */
export interface EventsBatch {
  readonly items: ReadonlyArray<McpWorkers.ServerNotification>
  readonly done: boolean
}

/**
 * What the host answers each operation other than a request with, its success and its failures, declared once: those
 * of the `McpWorkers` operation it stands for. A request's success is the result type of its operation table entry
 * (`Operations.Operation`), and its failures a `RequestError`. Replies are not decoded against these: the host posts
 * what its own service answered, and a request's result was checked once, in the owner, against the protocol's schema
 * of its method (C25).
 *
 * @internal
 */
export interface Answers {
  readonly RemoteOpen: ReturnType<McpWorkers.Lifecycle["open"]>
  readonly RemoteStatus: ReturnType<McpWorkers.Lifecycle["status"]>
  readonly RemoteCancel: ReturnType<McpWorkers.Lifecycle["cancel"]>
  readonly RemoteClose: ReturnType<McpWorkers.Lifecycle["close"]>
  readonly RemoteEvents: Effect.Effect<EventsBatch, Stream.Stream.Error<ReturnType<McpWorkers.Lifecycle["events"]>>>
}

/** The success of an operation other than a request. @internal */
export type SuccessOf<O extends LifecycleOperation> = Effect.Effect.Success<Answers[O["_tag"]]>

/** The failures of an operation other than a request. @internal */
export type FailureOf<O extends LifecycleOperation> = Effect.Effect.Error<Answers[O["_tag"]]>

/**
 * Remote → host: run `operation`. `from` is the remote's reply channel and `callId` numbers calls per remote.
 *
 * `ackBy` (sent only when the remote has not heard from a host lately) asks the host to confirm receipt at once, and
 * is the latest time (`Date.now()`, one clock for every thread of the process) at which it may: a host that reads
 * the request later refuses it unsent. So a remote that has no `Ack` once `ackBy` has passed knows that the request
 * was not sent and never will be (C22a).
 *
 * @internal
 */
export const RemoteRequest = Schema.TaggedStruct("RemoteRequest", {
  from: Schema.String,
  callId: Schema.Number,
  ackBy: Schema.optional(Schema.Number),
  operation: Operation,
  /** The caller's span, when it was tracing: the host's span of the call, and the owner's, are its children. */
  trace: Schema.optional(OwnerProtocol.TraceContext),
  /** The caller's thread, when it takes its replies on a port (`ReplyPort`). */
  thread: Schema.optional(Schema.Number)
})

/**
 * Remote → host: the caller of `callId` stopped waiting. The host interrupts the fiber running it, which cancels
 * exactly that request. With `reply`, the host answers with `DeliveryUnknown{reason: "interrupted"}` (the Promise
 * facade's `AbortSignal`); without, the remote has already moved on (an interrupted fiber).
 *
 * @internal
 */
export const Interrupt = Schema.TaggedStruct("Interrupt", {
  from: Schema.String,
  callId: Schema.Number,
  reply: Schema.Boolean
})

/** Remote → host: "are you there?", and "I am still here" for the calls it waits on. Answered by an `Ack`. @internal */
export const Ping = Schema.TaggedStruct("Ping", { from: Schema.String })

/** @internal */
export const RemoteMessage = Schema.Union(RemoteRequest, Interrupt, Ping)

/**
 * Remote → owner thread (its `ownerChannel`): a request of the operation table, straight to the worker's owner. The
 * deadline is always there (the route gives the worker's default budget). Answered on `from` by the owner: the
 * success as `Result`, a failure or refusal as `RemoteFailure`.
 *
 * @internal
 */
export const Direct = Schema.TaggedStruct("Direct", {
  from: Schema.String,
  callId: Schema.Number,
  method: OwnerProtocol.Method,
  params: Schema.String,
  deadline: Schema.Number,
  /** The caller's idle budget in ms (C121): the owner ends the request when its server's progress stops that long. */
  idleMs: Schema.optional(Schema.Number),
  saveTo: Schema.optional(Schema.String),
  spill: Schema.optional(OwnerProtocol.Spill),
  /** The caller's span, when it was tracing: the owner's span of the request, and the host's, are its children. */
  trace: Schema.optional(OwnerProtocol.TraceContext),
  /** The caller's thread, when it takes its replies on a port (`ReplyPort`). */
  thread: Schema.optional(Schema.Number)
})

/** @internal */
export type Direct = typeof Direct.Type

/** What a remote posts on an owner's channel: a request, or its caller's interruption (`Interrupt`). @internal */
export const OwnerChannelMessage = Schema.Union(Direct, Interrupt, Ping)

/** @internal */
export type OwnerChannelMessage = typeof OwnerChannelMessage.Type

/** @internal */
export type RemoteMessage = typeof RemoteMessage.Type

/** @internal */
export type RemoteMessageEncoded = typeof RemoteMessage.Encoded

/** Host → remote: a host received the message that asked for it (the request `callId`, or a `Ping`). @internal */
export const Ack = Schema.TaggedStruct("Ack", { hostId: Schema.String, callId: Schema.optional(Schema.Number) })

/** Host → remote: the operation's value (an id, a `WorkerStatus`, a raw MCP result, or nothing). @internal */
export const RemoteSuccess = Schema.TaggedStruct("RemoteSuccess", { callId: Schema.Number, value: Schema.Unknown })

/**
 * Owner thread → remote: the success of the call `callId`, straight from the worker's owner thread, as JSON text (the
 * result itself, or with `envelope` the server's whole response line, whose `result` it is). Parsed in the calling
 * thread.
 *
 * @internal
 */
export const Result = Schema.TaggedStruct("Result", {
  callId: Schema.Number,
  result: Schema.String,
  envelope: Schema.Boolean
})

/** @internal */
export type Result = typeof Result.Type

/** Host → remote: a typed failure, encoded, decoded back into the same error class. @internal */
export const RemoteFailure = Schema.TaggedStruct("RemoteFailure", { callId: Schema.Number, error: McpWorkerError })

/** Host → remote: the host hit a defect while running the call. @internal */
export const Defect = Schema.TaggedStruct("Defect", { callId: Schema.Number, message: Schema.String })

/** Host → remote: the server's progress on the request of `callId`. @internal */
export const RemoteProgress = Schema.TaggedStruct("RemoteProgress", {
  callId: Schema.Number,
  progress: OwnerProtocol.Progress
})

/**
 * Host → remote: the requests of this remote to `workerId` may go straight to its owner thread, on `channel`, with
 * `timeoutMs` as the budget of a call that names none. Sent once per worker with a request the host relayed.
 *
 * @internal
 */
export const Route = Schema.TaggedStruct("Route", {
  workerId: Schema.String,
  channel: Schema.String,
  timeoutMs: Schema.Number,
  traced: Schema.optional(Schema.Boolean)
})

/**
 * Host → remote: the worker's owner thread has ended (the worker closed, or its owner died), and so has its
 * channel. A direct request of this remote still waiting may have been taken by the owner before it ended: it ends
 * as `error` says, with its delivery unknown (C22a). The route is forgotten.
 *
 * @internal
 */
export const WorkerEnded = Schema.TaggedStruct("WorkerEnded", { workerId: Schema.String, error: McpWorkerError })

/** Host → remote: the route to `workerId` was dropped (routes per worker are bounded); relay requests again. @internal */
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

/**
 * Host → everyone: a host is serving remote requests (again). `startedAt` (epoch ms, sub-ms precision) orders
 * hosts: should two run in one process, only the newest serves.
 *
 * @internal
 */
export const Up = Schema.TaggedStruct("Up", { hostId: Schema.String, startedAt: Schema.Number })

/** Host → everyone: a host closed; its workers are closed and their ids forgotten. @internal */
export const Gone = Schema.TaggedStruct("Gone", { hostId: Schema.String })

/** @internal */
export const Announcement = Schema.Union(Up, Gone)

/** @internal */
export type Announcement = typeof Announcement.Type

/** A fresh random id for a remote client or a host (base64url, 96 bits). @internal */
export const randomId = (): string => randomBytes(12).toString("base64url")

/** A channel instance that never keeps its thread alive on its own. @internal */
export const unrefChannel = (name: string): BroadcastChannel => {
  const channel = new BroadcastChannel(name)
  channel.unref()
  return channel
}

/** What a call gets once the host has closed: its workers were closed and their ids forgotten with it. @internal */
export const afterHostClosed = (operation: Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message: "the mcp-worker host of this process has closed: build NodeMcpWorkers.layer() again to open workers"
      })
    : new UnknownWorker({ workerId: operation.workerId })

/** What a host answers to a request it read after its `ackBy`: the remote may still be waiting. @internal */
export const arrivedLate = (): HostUnavailable =>
  new HostUnavailable({
    message:
      `the mcp-worker host was blocked for more than ${ackWithinMs} ms and could not acknowledge the request in ` +
      "time; it was not sent"
  })

/** Arguments refused before anything was sent. @internal */
export const invalidArguments = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

// The decoders and encoder. The messages of every call (a remote's request to the host or straight to an owner thread,
// an owner thread's `Result`) are read by fast checks derived from their Schemas, without building a parse tree;
// anything else, or anything that does not pass, goes through the Schema and its errors.

const decodeRemoteMessageSchema = OwnerProtocol.safeDecoder(RemoteMessage)

const decodeReplySchema = OwnerProtocol.safeDecoder(Reply)

const decodeOwnerChannelSchema = OwnerProtocol.safeDecoder(OwnerChannelMessage)

/**
 * Validates what a remote posted on an owner thread's channel; a request (every direct call) by the fast check of
 * `Direct`, the rest by the Schema.
 *
 * @internal
 */
export const decodeOwnerChannelMessage = (raw: unknown): Either.Either<OwnerChannelMessage, ParseResult.ParseError> =>
  isPlainDirect(raw) ? Either.right(raw) : decodeOwnerChannelSchema(raw)

/**
 * Validates what a remote posted to the host. A request of the operation table (every call) takes the fast check of
 * `RemoteRequest` with a `RemoteCall`; anything else, or anything that does not pass, goes through the Schema and its
 * errors.
 *
 * @internal
 */
export const decodeRemoteMessage = (raw: unknown): Either.Either<RemoteMessage, ParseResult.ParseError> =>
  isPlainCallRequest(raw) ? Either.right(raw) : decodeRemoteMessageSchema(raw)

/**
 * Validates what a remote received on its reply channel; the success an owner thread posts (`Result`, every direct
 * call) by its fast check, the rest by the Schema.
 *
 * @internal
 */
export const decodeReply = (raw: unknown): Either.Either<Reply, ParseResult.ParseError> =>
  isPlainResult(raw) ? Either.right(raw) : decodeReplySchema(raw)

// The messages of every call, read without a parse tree by checks derived from their Schemas. Of a remote's requests
// to the host, only those of the operation table (every call) take the fast path.
const isPlainCallRequest = OwnerProtocol.fastCheck(Schema.Struct({ ...RemoteRequest.fields, operation: RemoteCall }))

const isPlainDirect = OwnerProtocol.fastCheck(Direct)

const isPlainResult = OwnerProtocol.fastCheck(Result)

/** @internal */
export const encodeReply = Schema.encodeSync(Reply)

/** @internal */
export const decodeAnnouncement = OwnerProtocol.safeDecoder(Announcement)

// The reply channels a thread posts to: one sink per remote, kept open for the next answer, the least recently opened
// closed past a bound (an evicted remote just gets a new one). A remote that names its thread gets a port of its own,
// sent to that thread (`ReplyPort`); others get a `BroadcastChannel` instance. None keeps its thread alive.
/** Where one remote's replies are posted. @internal */
export interface ReplySink {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
}

/** @internal */
export interface ReplyChannels {
  /** The open sink of the remote `name`, opened now if it is not: a port to `thread` when it names one. */
  readonly get: (name: string, thread?: number | undefined) => ReplySink
  /** Closes every sink. */
  readonly close: () => void
}

const channelSink = (name: string): ReplySink => {
  const channel = new WorkerThreads.BroadcastChannel(name)
  channel.unref()
  return channel
}

/**
 * A port whose other end goes to the thread `thread` for the remote `to` (`ReplyPort`, C150); `undefined` where it
 * cannot (this very thread, or a Node without `postMessageToThread`). The main thread hands a port over at once; any
 * other thread's handover passes through the main thread, which may be blocked (C22 holds for direct calls while it
 * is): with `fallbackAfterMs`, what was posted and not yet confirmed received goes on the remote's channel too after
 * that long, and later replies with it until the handover is confirmed. Only replies the remote reads once each (one
 * per call, by call id) may be posted twice so; without `fallbackAfterMs` only the main thread uses ports.
 *
 * @internal
 */
export const openReplyPort = (
  to: string,
  thread: number | undefined,
  fallbackAfterMs?: number | undefined
): ReplySink | undefined => {
  // A namespace read: Nodes before 22.5 have no `postMessageToThread` to import by name.
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

/** An owner thread's replies to one remote wait this long for its reply port before its channel carries them. */
const ownerFallbackMs = 100

const openSink = (name: string, thread: number | undefined): ReplySink =>
  openReplyPort(name, thread, ownerFallbackMs) ?? channelSink(name)

/**
 * The sinks of the remotes last heard from, at most `max` (the least recently opened closed past it), each opened by
 * `open`; a remote `open` has no sink for is not kept.
 *
 * @internal
 */
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
    /** The sink of `name`, if one is open. */
    peek: (name: string): ReplySink | undefined => sinks.get(name),
    close: () => {
      for (const sink of sinks.values()) sink.close()
      sinks.clear()
    }
  }
}

/** @internal */
export const makeReplyChannels = (max: number): ReplyChannels => bounded(max, openSink)

// The request an owner thread took straight from a remote caller, as the host reads it for `status` and its view: a few
// bytes of memory the owner writes and the host only reads, so that no message per request crosses to the host and
// the host's view is the owner's own record (C8).

// [sequence, length] as Int32, then `since` as Float64, then the request id's bytes.
const headerBytes = 16
const maxIdBytes = 64

/** @internal */
export type Slot = SharedArrayBuffer

/** @internal */
export const makeSlot = (): Slot => new SharedArrayBuffer(headerBytes + maxIdBytes)

/** What the slot holds: the request in flight and since when (epoch ms). @internal */
export interface Held {
  readonly requestId: string
  readonly since: number
}

/**
 * The owner's writer. A sequence number, odd while a write runs, lets a reader in another thread see a whole write or
 * retry.
 *
 * @internal
 */
export const slotWriter = (slot: Slot) => {
  const header = new Int32Array(slot, 0, 2)
  const since = new Float64Array(slot, 8, 1)
  const bytes = new Uint8Array(slot, headerBytes, maxIdBytes)
  return {
    set: (requestId: string): void => {
      Atomics.add(header, 0, 1)
      const { written } = new TextEncoder().encodeInto(requestId.slice(0, maxIdBytes), bytes)
      since[0] = Date.now()
      Atomics.store(header, 1, written)
      Atomics.add(header, 0, 1)
    },
    clear: (): void => {
      Atomics.add(header, 0, 1)
      Atomics.store(header, 1, 0)
      Atomics.add(header, 0, 1)
    }
  }
}

const decoder = new TextDecoder()

/** The host's read: `undefined` when the owner holds no request taken directly. @internal */
export const readSlot = (slot: Slot): Held | undefined => {
  const header = new Int32Array(slot, 0, 2)
  // A write takes a few instructions; an owner that died in the middle of one has nothing in flight.
  for (let tries = 0; tries < 10_000; tries++) {
    const before = Atomics.load(header, 0)
    if ((before & 1) === 1) continue
    const length = Atomics.load(header, 1)
    const held =
      length === 0
        ? undefined
        : {
            requestId: decoder.decode(new Uint8Array(slot, headerBytes, length).slice()),
            since: new Float64Array(slot, 8, 1)[0]!
          }
    if (Atomics.load(header, 0) === before) return held
  }
  return undefined
}
