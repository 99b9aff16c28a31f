/**
 * A remote thread's client: how it starts a call, and where the call goes. Its record, and what it receives, is
 * `record.ts`; how it knows the host is there, `liveness.ts`.
 *
 * Requests go straight to a worker's owner thread once the host has given this client the worker's route (with the
 * first request it relayed there), as long as the host was heard from lately: the owner decides busy and names the
 * request, and tells the host before it sends it. A host that has not been heard from lately gets the request, with
 * the `ackBy` that proves whether it was sent (C22a). Calls with progress always go through the host (C29).
 *
 * @internal
 */
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as Protocol from "../wire/remoteProtocol.js"
import { arm } from "./liveness.js"
import { interrupt, onAnnouncement, onReply, post, postOn, type RemoteClient, type WaitingCall } from "./record.js"

export type { RemoteClient } from "./record.js"

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
  Effect.withFiberRuntime((fiber) => {
    const trace = OwnerProtocol.traceContextOfFiber(fiber)
    return Effect.async<Protocol.SuccessOf<O>, Protocol.FailureOf<O>>((resume) =>
      start(client, operation, undefined, undefined, resume, trace)
    )
  })

/**
 * `send`, as the register step of an `Effect.async`: posts the operation and gives what the caller's interruption
 * runs. For callers that check their input in the same step. `A` and `E` are the operation's answer: a request's
 * operation table entry, or `Protocol.Answers`. With `signal`, aborting asks the host to interrupt exactly this call
 * and answer `DeliveryUnknown{reason: "interrupted"}`. `trace`: the caller's span, when it is tracing.
 *
 * @internal
 */
export const start = <A, E>(
  client: RemoteClient,
  operation: Protocol.Operation,
  signal: AbortSignal | undefined,
  onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
  resume: (exit: Exit.Exit<A, E>) => void,
  trace?: OwnerProtocol.TraceContext
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
    if (route !== undefined) return startDirect(client, callId, operation, route, signal, resume, trace)
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
  const message: Protocol.RemoteMessageEncoded =
    ackBy === undefined
      ? { _tag: "RemoteRequest", from: client.from, callId, operation }
      : { _tag: "RemoteRequest", from: client.from, callId, ackBy, operation }
  post(client, trace === undefined ? message : { ...message, trace })
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
  resume: (exit: Exit.Exit<any, any>) => void,
  trace: OwnerProtocol.TraceContext | undefined
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
  const { saveTo, spill } = operation
  postOn(
    route.channel,
    saveTo === undefined && spill === undefined && trace === undefined
      ? message
      : {
          ...message,
          ...(saveTo === undefined ? {} : { saveTo }),
          ...(spill === undefined ? {} : { spill }),
          ...(trace === undefined ? {} : { trace })
        }
  )
  arm(client)
  return stop
}
