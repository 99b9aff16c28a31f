/**
 * The thread plane: any thread of a process reaches the host of that process (`NodeMcpWorkers.layer()`, in some
 * thread, this one included) by worker id, over the v1 protocol of `protocol.ts`. Its record and what it receives are
 * `record.ts`; how it knows the host is there, `liveness.ts`.
 *
 * A request goes straight to a worker's owner thread once the host gave this caller the worker's route (with the
 * first request it relayed there), as long as the host was heard from lately: the owner decides busy, names the
 * request and runs its budget (C22). A host not heard from lately gets the request, with the `ackBy` that proves
 * whether it was sent (C22a). Calls with progress always go through the host (C29).
 *
 * @internal
 */
import type * as Plane from "../../Plane.js"
import { afterPendingMessages, open as openChannel, postOn, takeReplyPorts } from "./channel.js"
import { armCall, armKeepAlive, stopKeepAlive } from "./liveness.js"
import * as Protocol from "./protocol.js"
import {
  afterHostClosed,
  interrupt,
  onAnnouncement,
  onReply,
  post,
  settle,
  type ThreadClient,
  type Waiting
} from "./record.js"

/** What a call takes beyond its operation: the caller's signal, progress callback and span. @internal */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((progress: Protocol.Progress) => void) | undefined
  readonly trace?: Protocol.TraceContext | undefined
}

/** A call posted: its number (to stop waiting on it) and its answer. @internal */
export interface Sent {
  readonly callId: number
  readonly answer: Promise<unknown>
}

/** The host's operation for a checked request; its deadline counts from now. @internal */
export const callOf = (call: Omit<Plane.Call, "signal" | "trace">): Protocol.RemoteCall => {
  const { saveTo, spill, onProgress, idleMs } = call
  return {
    _tag: "RemoteCall",
    workerId: call.workerId,
    method: call.method as Protocol.Method,
    params: call.params,
    deadline: call.budgetMs === undefined ? undefined : Date.now() + call.budgetMs,
    ...(idleMs === undefined ? {} : { idleMs }),
    ...(saveTo === undefined ? {} : { saveTo }),
    ...(spill === undefined ? {} : { spill }),
    // Progress comes through the host: a success straight from the owner could overtake its last (C29).
    ...(onProgress === undefined ? { direct: true } : { progress: true })
  }
}

/** The error of a call on a disposed caller, or of one in flight when it was disposed. @internal */
export const disposedError = (message: string): Error => {
  const error = new Error(message)
  error.name = "AbortError"
  return error
}

/**
 * A thread caller: its channels never keep the thread alive while no call is in flight.
 *
 * @internal
 */
export const make = (): ThreadClient => {
  const from = Protocol.replyChannel(Protocol.randomId())
  const client: ThreadClient = {
    from,
    replies: openChannel(from),
    replyPorts: takeReplyPorts(from, (data) => onReply(client, data)),
    announcements: openChannel(Protocol.announceChannel),
    pending: new Map(),
    routes: new Map(),
    nextCallId: 0,
    lastHeard: Number.NEGATIVE_INFINITY,
    lastSent: Number.NEGATIVE_INFINITY,
    probe: undefined,
    knownHost: undefined,
    hostGone: false,
    keepAlive: undefined
  }
  client.replies.onmessage = (event) => onReply(client, event.data)
  client.announcements.onmessage = (event) => onAnnouncement(client, event.data, afterPendingMessages)
  return client
}

/** Closes the caller's channels; the calls in flight end with an `AbortError`, and whoever runs them is told. @internal */
export const dispose = (client: ThreadClient): void => {
  stopKeepAlive(client)
  for (const [callId, call] of Array.from(client.pending.entries())) {
    interrupt(client, callId, false, call)
    settle(client, callId, {
      ok: false,
      error: disposedError("the mcp-worker client was disposed while the call was in flight")
    })
  }
  client.replies.close()
  client.replyPorts?.close()
  client.announcements.close()
}

/**
 * Posts one operation and gives its answer. A signal aborted before this sends nothing and rejects with its reason;
 * aborted while the call waits, it asks whoever runs the call to interrupt exactly it and answer
 * `DeliveryUnknown{reason: "interrupted"}` (C11, C66).
 *
 * @internal
 */
export const send = (client: ThreadClient, operation: Protocol.Operation, options: CallOptions = {}): Sent => {
  const { signal } = options
  if (signal?.aborted === true) return refused(signal.reason)
  if (client.hostGone) return refused(afterHostClosed(operation))
  const callId = ++client.nextCallId
  const now = Date.now()
  // Heard from the host lately, and given the route: straight to the owner thread (progress comes through the host).
  if (
    operation._tag === "RemoteCall" &&
    options.onProgress === undefined &&
    now - client.lastHeard <= Protocol.staleAfterMs
  ) {
    const route = client.routes.get(operation.workerId)
    // C83: outside any span, a call goes through a host that traces, whose span then roots it.
    const direct = route !== undefined && (!route.traced || options.trace !== undefined)
    if (direct) return sendDirect(client, callId, operation, route, options)
  }
  // Not heard from a host lately: this request asks for an `Ack`, by a time after which a host refuses it.
  const ackBy = now - client.lastHeard > Protocol.staleAfterMs ? now + Protocol.ackWithinMs : undefined
  if (ackBy !== undefined && client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.ackWithinMs }
  // Only requests have an answer for a caller who stops waiting on its own (`DeliveryUnknown`); an open or a close is
  // bounded by the host, and by the `Ack`s of a host that is gone.
  const deadline = operation._tag === "RemoteCall" ? operation.deadline : undefined
  const answer = register(client, callId, {
    operation,
    channel: undefined,
    giveUpAt: deadline === undefined ? undefined : deadline + Protocol.graceMs,
    ackBy,
    options
  })
  const message: Protocol.RemoteRequest = {
    _tag: "RemoteRequest",
    from: client.from,
    callId,
    ...(ackBy === undefined ? {} : { ackBy }),
    operation,
    ...(options.trace === undefined ? {} : { trace: options.trace }),
    ...replyThread(client)
  }
  post(client, message)
  armKeepAlive(client)
  return { callId, answer }
}

/** The thread a replier sends its reply port to, when this caller takes replies on ports. */
const replyThread = (client: ThreadClient): { readonly thread?: number } =>
  client.replyPorts === undefined ? {} : { thread: client.replyPorts.thread }

const refused = (error: unknown): Sent => ({ callId: 0, answer: Promise.reject(error) })

/**
 * A request straight to the worker's owner thread, on its route: no `Ack` is asked (the host was heard from lately),
 * and the deadline always travels with it, the worker's default budget when the call names none.
 */
const sendDirect = (
  client: ThreadClient,
  callId: number,
  operation: Protocol.RemoteCall,
  route: { readonly channel: string; readonly timeoutMs: number },
  options: CallOptions
): Sent => {
  const deadline = operation.deadline ?? Date.now() + route.timeoutMs
  const answer = register(client, callId, {
    operation,
    channel: route.channel,
    giveUpAt: deadline + Protocol.graceMs,
    ackBy: undefined,
    options
  })
  const { saveTo, spill, idleMs } = operation
  const { trace } = options
  const message: Protocol.Direct = {
    _tag: "Direct",
    from: client.from,
    callId,
    method: operation.method,
    params: operation.params,
    deadline,
    ...(idleMs === undefined ? {} : { idleMs }),
    ...(saveTo === undefined ? {} : { saveTo }),
    ...(spill === undefined ? {} : { spill }),
    ...(trace === undefined ? {} : { trace }),
    ...replyThread(client)
  }
  postOn(route.channel, message)
  armKeepAlive(client)
  return { callId, answer }
}

/** Records a call in flight, wired to its caller's signal, with its own timer. */
const register = (
  client: ThreadClient,
  callId: number,
  call: {
    readonly operation: Protocol.Operation
    readonly channel: string | undefined
    readonly giveUpAt: number | undefined
    readonly ackBy: number | undefined
    readonly options: CallOptions
  }
): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const { signal, onProgress } = call.options
    const onAbort = () => {
      if (client.pending.has(callId)) interrupt(client, callId, true)
    }
    const waiting: Waiting = {
      operation: call.operation,
      channel: call.channel,
      giveUpAt: call.giveUpAt,
      ackBy: call.ackBy,
      acked: false,
      onProgress,
      resolve,
      reject,
      release: signal === undefined ? () => {} : () => signal.removeEventListener("abort", onAbort),
      timer: undefined
    }
    client.pending.set(callId, waiting)
    if (client.pending.size === 1) client.replies.ref?.()
    signal?.addEventListener("abort", onAbort, { once: true })
    armCall(client, callId, waiting)
  })

/**
 * Stops waiting on a call whose caller no longer wants its answer (an `events` iterator left early): it is forgotten
 * here, and whoever runs it is told.
 *
 * @internal
 */
export const abandon = (client: ThreadClient, sent: Sent): void => {
  const call = client.pending.get(sent.callId)
  if (call === undefined) return
  sent.answer.catch(() => {})
  interrupt(client, sent.callId, false, call)
  settle(client, sent.callId, { ok: false, error: disposedError("the call was abandoned") })
}
