/**
 * A thread caller's record, as the MCP SDK's `Protocol` keeps one: the calls this thread waits on (one map, by call
 * id, each with its own timer) and what it knows of the host. What every function does to it is here — post, tell
 * whoever runs a call that its caller stopped waiting, settle a call — and what the caller receives: the replies on
 * its own channel (from the host, and straight from an owner thread) and the hosts' announcements.
 *
 * @internal
 */
import { fromEncoded, HostUnavailable, type McpWorkerError, UnknownWorker, WorkerFailed } from "../../McpWorkerError.js"
import type { Channel, ReplyPorts } from "./channel.js"
import { postOn } from "./channel.js"
import * as Protocol from "./protocol.js"

/** A call this thread waits on: where it went, when it is given up, and what settles it. @internal */
export interface Waiting {
  readonly operation: Protocol.Operation
  /** The owner thread's channel the request went to directly; `undefined`: it went to the host. */
  readonly channel: string | undefined
  /** When this thread stops waiting without the host: the request's deadline plus `graceMs`, if it has one. */
  readonly giveUpAt: number | undefined
  /** The time by which a host must acknowledge the request, when one was asked to; a host refuses it later. */
  readonly ackBy: number | undefined
  acked: boolean
  /** The caller's progress callback, kept in this thread. */
  readonly onProgress: ((progress: Protocol.Progress) => void) | undefined
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
  /** Drops what ties the call to its caller (the abort listener). */
  readonly release: () => void
  /** The call's own timer: its `ackBy`, then its `giveUpAt`. */
  timer: ReturnType<typeof setTimeout> | undefined
}

/** One thread caller's state. @internal */
export interface ThreadClient {
  /** This caller's reply channel. */
  readonly from: string
  readonly replies: Channel
  /** The ports the host and owner threads reply on, where this runtime takes them (`Protocol.ReplyPort`). */
  readonly replyPorts: ReplyPorts | undefined
  readonly announcements: Channel
  readonly pending: Map<number, Waiting>
  /** The owner threads this caller's requests may reach directly, by worker id (`Route`). */
  readonly routes: Map<string, { readonly channel: string; readonly timeoutMs: number; readonly traced: boolean }>
  nextCallId: number
  lastHeard: number
  lastSent: number
  /** An acknowledgement asked for and not yet received: when it was asked, and how long it may take. */
  probe: { readonly sentAt: number; readonly withinMs: number } | undefined
  knownHost: string | undefined
  hostGone: boolean
  /** The keep-alive timer (pings, and the probe's verdict), and when it fires. */
  keepAlive: { readonly handle: ReturnType<typeof setTimeout>; readonly at: number } | undefined
}

/** Posts to the host, which goes by when it last heard from this caller. @internal */
export const post = (client: ThreadClient, message: Protocol.RemoteMessage): void => {
  postOn(Protocol.hostChannel, message)
  client.lastSent = Date.now()
}

/**
 * Tells whoever runs the call that its caller stopped waiting, where the request went: an owner thread takes its
 * caller's interruption on the same channel, after the request.
 *
 * @internal
 */
export const interrupt = (client: ThreadClient, callId: number, reply: boolean, call = client.pending.get(callId)) => {
  const message: Protocol.Interrupt = { _tag: "Interrupt", from: client.from, callId, reply }
  if (call?.channel === undefined) post(client, message)
  else postOn(call.channel, message)
}

/** How a call ended. @internal */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/** Ends a call with its answer; the reply channel stops holding the thread once no call waits. @internal */
export const settle = (client: ThreadClient, callId: number, outcome: Outcome): void => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  client.pending.delete(callId)
  if (call.timer !== undefined) clearTimeout(call.timer)
  call.release()
  if (client.pending.size === 0) client.replies.unref?.()
  if (outcome.ok) call.resolve(outcome.value)
  else call.reject(outcome.error)
}

/** Ends the calls in flight (`which` of them) with `error`, and tells whoever may still run them to stop. @internal */
export const failAll = (
  client: ThreadClient,
  error: (operation: Protocol.Operation) => unknown,
  which: (call: Waiting) => boolean = () => true
): void => {
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (!which(call)) continue
    interrupt(client, callId, false, call)
    settle(client, callId, { ok: false, error: error(call.operation) })
  }
}

/** What a call gets once the host has closed: its workers were closed and their ids forgotten with it. @internal */
export const afterHostClosed = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message: "the mcp-worker host of this process has closed: build NodeMcpWorkers.layer() again to open workers"
      })
    : new UnknownWorker({ workerId: operation.workerId })

/** Word from the host: the probe out, if any, is answered. @internal */
export const heard = (client: ThreadClient): void => {
  client.lastHeard = Date.now()
  client.probe = undefined
}

// Only a host of another version of this library would send an error this version cannot read.
const decoded = (encoded: unknown): unknown => {
  try {
    return fromEncoded(encoded)
  } catch {
    return new Error("the mcp-worker host's answer could not be read (another version of mcp-worker?)")
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const isCallReply = (u: Record<string, unknown>): boolean => typeof u.callId === "number"

/**
 * A success straight from the owner thread. It says nothing of the host, whose liveness this caller tracks, so it is
 * not taken as word from it.
 */
const onResult = (client: ThreadClient, reply: Record<string, unknown>): void => {
  const callId = reply.callId as number
  const call = client.pending.get(callId)
  if (call === undefined || call.operation._tag !== "RemoteCall" || typeof reply.result !== "string") return
  let value: unknown
  try {
    value = JSON.parse(reply.result)
  } catch {
    return settle(client, callId, { ok: false, error: new Error("the owner's answer could not be read") })
  }
  // The envelope is the server's response line: its `result` is the call's.
  settle(client, callId, {
    ok: true,
    value: reply.envelope === true ? (isRecord(value) ? value.result : undefined) : value
  })
}

/**
 * The worker's owner has ended. A direct request still waiting may have been taken, so it is answered unknown, never
 * as not sent (C22a).
 */
const onWorkerEnded = (client: ThreadClient, workerId: string, encoded: unknown): void => {
  const route = client.routes.get(workerId)
  if (route === undefined) return
  client.routes.delete(workerId)
  const error = decoded(encoded)
  const failed = error instanceof WorkerFailed ? error : undefined
  const ended = new WorkerFailed({
    workerId,
    kind: failed?.kind ?? "closing",
    message: failed?.message ?? "the worker closed while the request was in flight",
    delivery: "unknown"
  })
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (call.channel === route.channel) settle(client, callId, { ok: false, error: ended })
  }
}

const onProgress = (client: ThreadClient, callId: number, progress: unknown): void => {
  const callback = client.pending.get(callId)?.onProgress
  if (callback === undefined || !isRecord(progress) || typeof progress.progress !== "number") return
  // The caller's own code: what it throws must not reach this channel's message handling.
  try {
    callback(progress as unknown as Protocol.Progress)
  } catch {
    return
  }
}

/** A message on the caller's reply channel; anything that is not one of the protocol's replies is dropped. @internal */
export const onReply = (client: ThreadClient, data: unknown): void => {
  if (!isRecord(data)) return
  if (data._tag === "Result") return isCallReply(data) ? onResult(client, data) : undefined
  switch (data._tag) {
    case "Route":
      if (typeof data.workerId !== "string" || typeof data.channel !== "string" || typeof data.timeoutMs !== "number")
        return
      heard(client)
      client.routes.set(data.workerId, {
        channel: data.channel,
        timeoutMs: data.timeoutMs,
        traced: data.traced === true
      })
      return
    case "Unrouted":
      if (typeof data.workerId !== "string") return
      heard(client)
      client.routes.delete(data.workerId)
      return
    case "WorkerEnded":
      if (typeof data.workerId !== "string") return
      heard(client)
      return onWorkerEnded(client, data.workerId, data.error)
    case "Ack": {
      if (typeof data.hostId !== "string") return
      heard(client)
      client.knownHost = data.hostId
      client.hostGone = false
      const call = typeof data.callId === "number" ? client.pending.get(data.callId) : undefined
      if (call !== undefined) call.acked = true
      return
    }
  }
  if (!isCallReply(data)) return
  const callId = data.callId as number
  switch (data._tag) {
    case "RemoteSuccess":
      heard(client)
      return settle(client, callId, { ok: true, value: data.value })
    case "RemoteFailure":
      // An owner's refusal also arrives this way: it says nothing of the host, but it was not silent either.
      heard(client)
      return settle(client, callId, { ok: false, error: decoded(data.error) })
    case "Defect":
      heard(client)
      return settle(client, callId, { ok: false, error: new Error(String(data.message)) })
    case "RemoteProgress":
      heard(client)
      return onProgress(client, callId, data.progress)
  }
}

/** A host's announcement: one started (`Up`), or ours closed (`Gone`). @internal */
export const onAnnouncement = (client: ThreadClient, data: unknown, later: (f: () => void) => void): void => {
  if (!isRecord(data) || typeof data.hostId !== "string") return
  if (data._tag === "Up") {
    client.knownHost = data.hostId
    client.hostGone = false
    heard(client)
    return
  }
  if (data._tag !== "Gone") return
  // Another host's `Gone` (a second host in the process, on standby) says nothing about ours.
  if (client.knownHost !== undefined && data.hostId !== client.knownHost) return
  client.knownHost = undefined
  client.hostGone = true
  client.routes.clear()
  // The host answered every call it ran before announcing; those answers are read in this same turn of the event
  // loop, so whatever is still pending after it was never going to be.
  later(() => {
    if (client.hostGone) failAll(client, afterHostClosed)
  })
}
