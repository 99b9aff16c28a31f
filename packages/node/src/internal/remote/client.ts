/**
 * The calls a remote thread has in flight and what it knows of the host: one record per remote client, passed to
 * the module-level functions below (the liveness of the host, the one timer, the handling of replies).
 *
 * How a remote knows the host is there, at no cost on the hot path: it asks the host to acknowledge a request only
 * when it has not heard from a host lately, and only then arms the no-answer check that turns a missing host into
 * `HostUnavailable` (C22, C22a). While calls are in flight it pings the host whenever it has posted nothing for
 * `pingEveryMs`, which tells the host that this thread is still waiting, and checks that the host still
 * acknowledges. A request with a budget also carries its deadline, and is given up here, without the host, shortly
 * after it (C9).
 *
 * Requests go straight to a worker's owner thread once the host has given this client the worker's route (with the
 * first request it relayed there), as long as the host was heard from lately: the owner decides busy and names the
 * request, and tells the host before it sends it. A host that has not been heard from lately gets the request, with
 * the `ackBy` that proves whether it was sent (C22a). Calls with progress always go through the host (C29).
 *
 * @internal
 */
import { DeliveryUnknown, HostUnavailable, type McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../wire/remoteProtocol.js"

/** A call this thread waits on: where it went, and what settles it. */
interface WaitingCall {
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

/** A request no host acknowledged by its `ackBy`: proven never sent, since a host reading it later refuses it. */
const noHost = () =>
  new HostUnavailable({
    message:
      `no mcp-worker host acknowledged the request within ${Protocol.ackWithinMs} ms, so it was not sent (and a ` +
      "host that reads it later refuses it): build NodeMcpWorkers.layer() in some thread of this process (normally " +
      "the main thread) before using NodeMcpWorkers.layerRemote or makePromiseClient; if one runs, its event loop " +
      "was blocked"
  })

/** A request the host may have sent before it fell silent. */
const hostUnresponsive = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message:
          "the mcp-worker host stopped answering while it opened the worker; if it comes back, the open is " +
          "interrupted and nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId: operation.workerId,
        requestId: "",
        reason: "host_unresponsive",
        delivery: "unknown"
      })

// A fresh instance per message, closed at once: a remote holding a `host` instance would receive every other
// remote's requests too (a BroadcastChannel delivers to all instances of its name but the sender).
const postOn = (name: string, message: unknown) => {
  const channel = new BroadcastChannel(name)
  channel.postMessage(message)
  channel.close()
}

const post = (client: RemoteClient, message: Protocol.RemoteMessageEncoded) => {
  postOn(Protocol.hostChannel, message)
  client.lastSent = Date.now()
}

// Where the request went: an owner thread takes its caller's interruption on the same channel, after the request.
const interrupt = (client: RemoteClient, callId: number, reply: boolean, call = client.pending.get(callId)) => {
  const message: typeof Protocol.Interrupt.Type = { _tag: "Interrupt", from: client.from, callId, reply }
  if (call?.channel === undefined) post(client, message)
  else postOn(call.channel, message)
}

const settle = (client: RemoteClient, callId: number, exit: Exit.Exit<unknown, McpWorkerError>) => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  client.pending.delete(callId)
  if (client.pending.size === 0) client.replies.unref()
  call.resume(exit)
}

/** Ends the calls in flight (`which` of them) with `error`, and tells a host that may still run them to stop. */
const failAll = (
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

/**
 * Past its deadline and its grace, with no answer: the host is blocked or lost the call. The request may have
 * reached the server, and the host is told to cancel it. Its request id was never sent here.
 */
const giveUp = (client: RemoteClient, callId: number, call: WaitingCall) => {
  interrupt(client, callId, false)
  const workerId = call.operation._tag === "RemoteOpen" ? "" : call.operation.workerId
  settle(
    client,
    callId,
    Exit.fail(new DeliveryUnknown({ workerId, requestId: "", reason: "timeout", delivery: "unknown" }))
  )
}

const heard = (client: RemoteClient) => {
  client.lastHeard = Date.now()
  client.probe = undefined
}

/** When the timer must look next: the probe's deadline, the next keep-alive ping, a call's own deadlines. */
const nextCheck = (client: RemoteClient): number => {
  let at = client.probe !== undefined ? client.probe.sentAt + client.probe.withinMs : Number.POSITIVE_INFINITY
  if (client.pending.size === 0) return at
  at = Math.min(at, client.lastSent + Protocol.pingEveryMs)
  for (const call of client.pending.values()) {
    if (call.giveUpAt !== undefined && call.giveUpAt < at) at = call.giveUpAt
    if (call.ackBy !== undefined && !call.acked && call.ackBy < at) at = call.ackBy
  }
  return at
}

// One timer at most, re-armed only when an earlier check is needed: a steady stream of calls arms it about once
// per `pingEveryMs`, not once per call.
const arm = (client: RemoteClient) => {
  const at = nextCheck(client)
  if (at === Number.POSITIVE_INFINITY || (client.timer !== undefined && client.timer.at <= at)) return
  if (client.timer !== undefined) clearTimeout(client.timer.handle)
  // After this thread's event loop was blocked, timers run before the messages that arrived meanwhile are read:
  // the check waits for them (`setImmediate` runs after that turn's I/O), so that an answer or an `Ack` already
  // here is not taken for silence.
  const onTimer = () => {
    client.timer = undefined
    setImmediate(() => check(client))
  }
  // A timer holds at most 2^31 - 1 ms (longer ones fire at once); a later check re-arms it.
  const handle = setTimeout(onTimer, Math.min(Math.max(0, at - Date.now()) + 1, ServerConfig.maxTimeoutMs))
  handle.unref()
  client.timer = { handle, at }
}

const check = (client: RemoteClient) => {
  const now = Date.now()
  for (const [callId, call] of Array.from(client.pending.entries())) {
    // No `Ack` by `ackBy`, and every message that arrived meanwhile has been read (see `arm`): no host took it.
    if (call.ackBy !== undefined && !call.acked && now > call.ackBy) settle(client, callId, Exit.fail(noHost()))
    else if (call.giveUpAt !== undefined && now >= call.giveUpAt) giveUp(client, callId, call)
  }
  const probe = client.probe
  if (probe !== undefined && now - probe.sentAt >= probe.withinMs) {
    client.probe = undefined
    // The host fell silent with these calls in flight: each may have been sent before it did. A call still waiting
    // for its own `Ack` is left to its `ackBy`, which proves it either way.
    failAll(client, hostUnresponsive, (call) => call.ackBy === undefined || call.acked)
  }
  if (client.pending.size > 0 && now - client.lastSent >= Protocol.pingEveryMs) {
    post(client, { _tag: "Ping", from: client.from })
    // A probe already out keeps its own deadline: pings must not postpone the verdict on a host that is gone.
    if (client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.pingAckWithinMs }
  }
  arm(client)
}

const resultOf = (response: unknown): unknown =>
  Predicate.hasProperty(response, "result") ? response.result : undefined

/**
 * A success straight from the owner thread. It says nothing of the host, whose liveness this client tracks, so it
 * is not taken as word from it.
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
 * The worker's owner has ended: the host answered every request of this client the owner took, on this same channel,
 * before it said so; a direct request still waiting never reached the owner.
 */
const onWorkerEnded = (client: RemoteClient, reply: typeof Protocol.WorkerEnded.Type) => {
  const route = client.routes.get(reply.workerId)
  if (route === undefined) return
  client.routes.delete(reply.workerId)
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (call.channel === route.channel) settle(client, callId, Exit.fail(reply.error))
  }
}

const onReply = (client: RemoteClient, data: unknown) => {
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

const onAnnouncement = (client: RemoteClient, data: unknown) => {
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

/**
 * A remote client in the current scope: its channels never keep the thread alive while no call is in flight, and
 * are closed with the scope (calls still in flight are interrupted, and the host told so).
 *
 * @internal
 */
export const make: Effect.Effect<RemoteClient, never, Scope.Scope> = Effect.gen(function* () {
  const from = Protocol.replyChannel(Protocol.randomId())
  const client: RemoteClient = yield* Effect.acquireRelease(
    Effect.sync((): RemoteClient => ({
      from,
      replies: Protocol.unrefChannel(from),
      pending: new Map(),
      routes: new Map(),
      nextCallId: 0,
      lastHeard: Number.NEGATIVE_INFINITY,
      lastSent: Number.NEGATIVE_INFINITY,
      probe: undefined,
      knownHost: undefined,
      hostGone: false,
      timer: undefined
    })),
    (client) =>
      Effect.sync(() => {
        if (client.timer !== undefined) clearTimeout(client.timer.handle)
        client.timer = undefined
        const left = Array.from(client.pending.entries())
        client.pending.clear()
        for (const [callId, call] of left) {
          interrupt(client, callId, false, call)
          call.resume(Exit.interrupt(FiberId.none))
        }
        client.replies.close()
      })
  )
  client.replies.onmessage = (event) => onReply(client, event.data)
  const announcements = yield* Effect.acquireRelease(
    Effect.sync(() => Protocol.unrefChannel(Protocol.announceChannel)),
    (channel) => Effect.sync(() => channel.close())
  )
  announcements.onmessage = (event) => onAnnouncement(client, event.data)
  return client
})

/**
 * Sends one operation other than a request to the host and waits for its answer, which is that of the `McpWorkers`
 * operation it stands for.
 *
 * @internal
 */
export const send = <O extends Protocol.LifecycleOperation>(
  client: RemoteClient,
  operation: O
): Effect.Effect<Protocol.SuccessOf<O>, Protocol.FailureOf<O>> =>
  Effect.async<Protocol.SuccessOf<O>, Protocol.FailureOf<O>>((resume) =>
    start(client, operation, undefined, undefined, resume)
  )

/**
 * `send`, as the register step of an `Effect.async`: posts the operation and gives what the caller's interruption
 * runs. For callers that check their input in the same step. `A` and `E` are the operation's answer: a request's
 * operation table entry, or `Protocol.Answers`. With `signal`, aborting asks the host to interrupt exactly this call
 * and answer `DeliveryUnknown{reason: "interrupted"}`.
 *
 * @internal
 */
export const start = <A, E>(
  client: RemoteClient,
  operation: Protocol.Operation,
  signal: AbortSignal | undefined,
  onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
  resume: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<void> | void => {
  // What this client answers itself (an abort, the host's close) is among every operation's failures.
  const answer: (exit: Exit.Exit<any, any>) => void = resume
  // Aborted between the call and now (this runs a moment after the call when the runtime is still starting):
  // nothing was sent, so nothing is.
  if (signal?.aborted === true) return answer(Exit.interrupt(FiberId.none))
  if (client.hostGone) return answer(Exit.fail(Protocol.afterHostClosed(operation)))
  const callId = ++client.nextCallId
  const now = Date.now()
  // Heard from the host lately, and given the route: straight to the owner thread (progress comes through the host).
  if (
    operation._tag === "RemoteCall" &&
    operation.progress !== true &&
    now - client.lastHeard <= Protocol.staleAfterMs
  ) {
    const route = client.routes.get(operation.workerId)
    if (route !== undefined) return startDirect(client, callId, operation, route, signal, resume)
  }
  // Not heard from a host lately: this request asks for an `Ack`, by a time after which a host refuses it.
  const ackBy = now - client.lastHeard > Protocol.staleAfterMs ? now + Protocol.ackWithinMs : undefined
  if (ackBy !== undefined && client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.ackWithinMs }
  // Only requests have an answer for a caller who stops waiting on its own (`DeliveryUnknown`); an open or a
  // close is bounded by the host, and by the `Ack`s of a host that is gone.
  const deadline = operation._tag === "RemoteCall" ? operation.deadline : undefined
  const stop = register(client, callId, {
    operation,
    channel: undefined,
    giveUpAt: deadline === undefined ? undefined : deadline + Protocol.graceMs,
    ackBy,
    signal,
    onProgress,
    resume
  })
  post(
    client,
    ackBy === undefined
      ? { _tag: "RemoteRequest", from: client.from, callId, operation }
      : { _tag: "RemoteRequest", from: client.from, callId, ackBy, operation }
  )
  arm(client)
  return stop
}

/**
 * Records a call in flight, wired to its caller's `AbortSignal` (aborting asks whoever runs it to interrupt it and
 * answer `DeliveryUnknown{reason: "interrupted"}`); gives what the caller's interruption runs.
 */
const register = (
  client: RemoteClient,
  callId: number,
  call: Omit<WaitingCall, "acked"> & { readonly signal: AbortSignal | undefined }
): Effect.Effect<void> => {
  const { signal, resume } = call
  const onAbort =
    signal === undefined
      ? undefined
      : () => {
          if (client.pending.has(callId)) interrupt(client, callId, true)
        }
  client.pending.set(callId, {
    operation: call.operation,
    channel: call.channel,
    giveUpAt: call.giveUpAt,
    ackBy: call.ackBy,
    acked: false,
    onProgress: call.onProgress,
    resume:
      onAbort === undefined
        ? resume
        : (exit) => {
            signal!.removeEventListener("abort", onAbort)
            resume(exit)
          }
  })
  if (client.pending.size === 1) client.replies.ref()
  if (onAbort !== undefined) signal!.addEventListener("abort", onAbort, { once: true })
  return stopWaiting(client, callId, signal, onAbort)
}

/** What the caller's interruption runs: the call is forgotten here, and whoever runs it is told. */
const stopWaiting = (
  client: RemoteClient,
  callId: number,
  signal: AbortSignal | undefined,
  onAbort: (() => void) | undefined
) =>
  Effect.sync(() => {
    if (onAbort !== undefined) signal!.removeEventListener("abort", onAbort)
    const call = client.pending.get(callId)
    if (call === undefined) return
    client.pending.delete(callId)
    if (client.pending.size === 0) client.replies.unref()
    interrupt(client, callId, false, call)
  })

/**
 * A request straight to the worker's owner thread, on its route: no `Ack` is asked (the host was heard from lately,
 * and is not on the way), and the deadline always travels with it, the worker's default budget when the call names
 * none. The owner answers the success and its refusals here; the host answers the rest.
 */
const startDirect = (
  client: RemoteClient,
  callId: number,
  operation: typeof Protocol.RemoteCall.Type,
  route: { readonly channel: string; readonly timeoutMs: number },
  signal: AbortSignal | undefined,
  resume: (exit: Exit.Exit<any, any>) => void
): Effect.Effect<void> => {
  const deadline = operation.deadline ?? Date.now() + route.timeoutMs
  const stop = register(client, callId, {
    operation,
    channel: route.channel,
    giveUpAt: deadline + Protocol.graceMs,
    ackBy: undefined,
    signal,
    onProgress: undefined,
    resume
  })
  const message: Protocol.Direct = {
    _tag: "Direct",
    from: client.from,
    callId,
    method: operation.method,
    params: operation.params,
    deadline
  }
  postOn(route.channel, operation.saveTo === undefined ? message : { ...message, saveTo: operation.saveTo })
  arm(client)
  return stop
}
