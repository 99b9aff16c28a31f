/**
 * A remote client's record: the calls this thread waits on and what it knows of the host, passed to the module-level
 * functions of `client.ts`, `liveness.ts` and `replies.ts`, as `RpcClient` keeps one record per client. What every one
 * of them does to it is here: post, interrupt a call, settle it.
 *
 * @internal
 */
import type { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Exit from "effect/Exit"
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
