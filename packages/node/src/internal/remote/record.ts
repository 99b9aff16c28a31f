/**
 * A remote client's record: the calls this thread waits on and what it knows of the host, passed to the module-level
 * functions of `client.ts` and `liveness.ts`, as `RpcClient` keeps one record per client. What every one of them does
 * to it is here (post, interrupt a call, settle it), and what the client receives: the replies on its own channel
 * (from the host, and an answer straight from an owner thread) and the hosts' announcements.
 *
 * @internal
 */
import { type McpWorkerError, WorkerFailed } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../wire/remoteProtocol.js"

/** A call this thread waits on: where it went, and what settles it. @internal */
export interface WaitingCall {
  readonly operation: Protocol.Operation
  /** The owner thread's channel the request went to directly; `undefined`: it went to the host. */
  readonly channel: string | undefined
  /** When this thread stops waiting without the host: the request's deadline plus `graceMs`, if it has one. */
  readonly giveUpAt: number | undefined
  /** The time by which a host must acknowledge the request, when one was asked to; a host refuses it later. */
  readonly ackBy: number | undefined
  acked: boolean
  /**
   * The caller's resume, typed by its operation where the call was made (`Protocol.Answers`, an operation table entry)
   * and kept here without it, as `RpcClient` keeps its entries: whatever settles a call hands on the value of a reply
   * to it, or an error this client makes (which every operation's failures include).
   */
  readonly resume: (exit: Exit.Exit<any, any>) => void
  /** The caller's progress callback, kept in this thread. */
  readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined
}

/** One remote client's state. @internal */
export interface RemoteClient {
  /** This client's reply channel. */
  readonly from: string
  readonly replies: BroadcastChannel
  readonly pending: Map<number, WaitingCall>
  /** The owner threads this client's requests may reach directly, by worker id (`Route`). */
  readonly routes: Map<string, { readonly channel: string; readonly timeoutMs: number }>
  nextCallId: number
  lastHeard: number
  lastSent: number
  /** An acknowledgement asked for and not yet received: when it was asked, and how long it may take. */
  probe: { readonly sentAt: number; readonly withinMs: number } | undefined
  knownHost: string | undefined
  hostGone: boolean
  /** The one timer, and when it fires. */
  timer: { readonly handle: ReturnType<typeof setTimeout>; readonly at: number } | undefined
}

/**
 * Posts on the channel `name`. A fresh instance per message, closed at once: a remote holding a `host` instance would
 * receive every other remote's requests too (a BroadcastChannel delivers to all instances of its name but the sender).
 *
 * @internal
 */
export const postOn = (name: string, message: unknown) => {
  const channel = new BroadcastChannel(name)
  channel.postMessage(message)
  channel.close()
}

/** Posts to the host, which goes by when it last heard from this client. @internal */
export const post = (client: RemoteClient, message: Protocol.RemoteMessageEncoded) => {
  postOn(Protocol.hostChannel, message)
  client.lastSent = Date.now()
}

/**
 * Tells whoever runs the call that its caller stopped waiting, where the request went: an owner thread takes its
 * caller's interruption on the same channel, after the request.
 *
 * @internal
 */
export const interrupt = (client: RemoteClient, callId: number, reply: boolean, call = client.pending.get(callId)) => {
  const message: typeof Protocol.Interrupt.Type = { _tag: "Interrupt", from: client.from, callId, reply }
  if (call?.channel === undefined) post(client, message)
  else postOn(call.channel, message)
}

/** Ends a call with its answer; the reply channel stops holding the thread once no call waits. @internal */
export const settle = (client: RemoteClient, callId: number, exit: Exit.Exit<unknown, McpWorkerError>) => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  client.pending.delete(callId)
  if (client.pending.size === 0) client.replies.unref()
  call.resume(exit)
}

/** Ends the calls in flight (`which` of them) with `error`, and tells a host that may still run them to stop. @internal */
export const failAll = (
  client: RemoteClient,
  error: (operation: Protocol.Operation) => McpWorkerError,
  which: (call: WaitingCall) => boolean = () => true
) => {
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (!which(call)) continue
    interrupt(client, callId, false)
    settle(client, callId, Exit.fail(error(call.operation)))
  }
}

/** Word from the host: the probe out, if any, is answered. @internal */
export const heard = (client: RemoteClient) => {
  client.lastHeard = Date.now()
  client.probe = undefined
}

const resultOf = (response: unknown): unknown =>
  Predicate.hasProperty(response, "result") ? response.result : undefined

/**
 * A success straight from the owner thread. It says nothing of the host, whose liveness this client tracks, so it
 * is not taken as word from it; nor does an owner's failure, which arrives as a `RemoteFailure` on this channel too.
 */
const onResult = (client: RemoteClient, reply: Protocol.Result) => {
  const call = client.pending.get(reply.callId)
  if (call === undefined || call.operation._tag !== "RemoteCall") return
  let value: unknown
  try {
    value = JSON.parse(reply.result)
  } catch {
    return settle(client, reply.callId, Exit.die(new Error("the owner's answer could not be read")))
  }
  // The envelope is the server's response line: its `result` is the call's.
  settle(client, reply.callId, Exit.succeed(reply.envelope ? resultOf(value) : value))
}

/**
 * The worker's owner has ended. The owner answers what it took before it ends, but on its own way here: a direct
 * request still waiting may have been taken, so it is answered unknown, never as not sent (C22a).
 */
const onWorkerEnded = (client: RemoteClient, reply: typeof Protocol.WorkerEnded.Type) => {
  const route = client.routes.get(reply.workerId)
  if (route === undefined) return
  client.routes.delete(reply.workerId)
  const { error } = reply
  const ended = new WorkerFailed({
    workerId: reply.workerId,
    kind: error._tag === "WorkerFailed" ? error.kind : "closing",
    message: error._tag === "WorkerFailed" ? error.message : "the worker closed while the request was in flight",
    delivery: "unknown"
  })
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (call.channel === route.channel) settle(client, callId, Exit.fail(ended))
  }
}

/** A message on the client's reply channel. @internal */
export const onReply = (client: RemoteClient, data: unknown) => {
  const decoded = Protocol.decodeReply(data)
  if (Either.isLeft(decoded)) return
  if (decoded.right._tag === "Result") return onResult(client, decoded.right)
  heard(client)
  const reply = decoded.right
  switch (reply._tag) {
    case "Route":
      client.routes.set(reply.workerId, { channel: reply.channel, timeoutMs: reply.timeoutMs })
      return
    case "Unrouted":
      client.routes.delete(reply.workerId)
      return
    case "WorkerEnded":
      return onWorkerEnded(client, reply)
    case "Ack": {
      client.knownHost = reply.hostId
      client.hostGone = false
      const call = reply.callId === undefined ? undefined : client.pending.get(reply.callId)
      if (call !== undefined) call.acked = true
      return
    }
    case "RemoteSuccess":
      return settle(client, reply.callId, Exit.succeed(reply.value))
    case "RemoteFailure":
      return settle(client, reply.callId, Exit.fail(reply.error))
    case "Defect":
      return settle(client, reply.callId, Exit.die(new Error(reply.message)))
    case "RemoteProgress": {
      const onProgress = client.pending.get(reply.callId)?.onProgress
      if (onProgress === undefined) return
      // The caller's own code: what it throws must not reach this channel's message handling.
      try {
        onProgress(reply.progress)
      } catch {
        return
      }
      return
    }
  }
}

/** A host's announcement: one started (`Up`), or ours closed (`Gone`). @internal */
export const onAnnouncement = (client: RemoteClient, data: unknown) => {
  const decoded = Protocol.decodeAnnouncement(data)
  if (Either.isLeft(decoded)) return
  const announcement = decoded.right
  if (announcement._tag === "Up") {
    client.knownHost = announcement.hostId
    client.hostGone = false
    heard(client)
    return
  }
  // Another host's `Gone` (a second host in the process, on standby) says nothing about ours.
  if (client.knownHost !== undefined && announcement.hostId !== client.knownHost) return
  client.knownHost = undefined
  client.hostGone = true
  client.routes.clear()
  // The host answered every call it ran before announcing; those answers travel on the reply channel and are read
  // in this same turn of the event loop, so whatever is still pending after it was never going to be.
  setImmediate(() => {
    if (client.hostGone) failAll(client, Protocol.afterHostClosed)
  })
}
