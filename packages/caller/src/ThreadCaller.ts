/**
 * The thread plane's caller record and its steps, for a surface that waits on calls its own way (the Effect face,
 * `NodeMcpWorkers.layerRemote`): it posts a call and gets its number and answer, and may stop waiting on it without
 * an answer (`abandon`: the host is told, silently), where the Promise client (`Client`) aborts by signal.
 *
 * @since 0.1.0
 */
import * as Operations from "./Operations.js"
import type * as Plane from "./Plane.js"
import { puller, subscribe as subscribeOn } from "./internal/thread/events.js"
import * as Thread from "./internal/thread/record.js"
import type { ThreadClient } from "./internal/thread/record.js"
import * as Protocol from "./internal/thread/protocol.js"

/**
 * One caller of this thread: its reply channel, its calls in flight, the routes the host gave it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ThreadCaller {
  readonly [callerBrand]: ThreadClient
}

declare const callerBrand: unique symbol

/**
 * A call posted: its number and its answer (the raw result, or a rejection with an `McpWorkerError` of the caller).
 *
 * @since 0.1.0
 * @category models
 */
export type Sent = Thread.Sent

/**
 * The span a call is part of: its ids, and the W3C `tracestate` and `baggage`.
 *
 * @since 0.1.0
 * @category models
 */
export type TraceContext = Protocol.TraceContext

/**
 * An operation other than a request, as the host reads it (`open`'s, already checked, with its deadline).
 *
 * @since 0.1.0
 * @category models
 */
export type Lifecycle = Exclude<Protocol.Operation, Protocol.RemoteCall | Protocol.RemoteEvents>

/**
 * The thread plane's channel names and timings (docs/wire.md): the host serves the plane by the same ones.
 *
 * @since 0.1.0
 * @category protocol
 */
export const protocol = {
  hostChannel: Protocol.hostChannel,
  announceChannel: Protocol.announceChannel,
  replyChannel: Protocol.replyChannel,
  ownerChannel: Protocol.ownerChannel,
  staleAfterMs: Protocol.staleAfterMs,
  ackWithinMs: Protocol.ackWithinMs,
  pingEveryMs: Protocol.pingEveryMs,
  pingAckWithinMs: Protocol.pingAckWithinMs,
  remoteGoneAfterMs: Protocol.remoteGoneAfterMs,
  graceMs: Protocol.graceMs
} as const

/**
 * A caller whose channels never keep the thread alive while no call is in flight.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): ThreadCaller => Thread.make() as unknown as ThreadCaller

/**
 * Closes the caller's channels; calls in flight end with an `AbortError`, and whoever runs them is told.
 *
 * @since 0.1.0
 * @category destructors
 */
export const dispose = (caller: ThreadCaller): void => Thread.dispose(record(caller))

/**
 * A budget in ms from now as the `deadline` every other thread reads (C9); `undefined` stays the default budget.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deadlineOf: (budgetMs: number | undefined) => number | undefined = Operations.deadlineOf

/**
 * The host's operation for a checked request; its deadline counts from now.
 *
 * @since 0.1.0
 * @category constructors
 */
export const callOf: (call: Omit<Plane.Call, "signal" | "trace">) => Protocol.RemoteCall = Thread.callOf

/**
 * Posts a checked request (C22, C22a).
 *
 * @since 0.1.0
 * @category requests
 */
export const request = (
  caller: ThreadCaller,
  call: Omit<Plane.Call, "trace"> & { readonly trace?: TraceContext | undefined }
): Sent =>
  Thread.send(record(caller), callOf(call), { signal: call.signal, onProgress: call.onProgress, trace: call.trace })

/**
 * Posts an operation other than a request (`open`, `status`, `cancel`, `close`).
 *
 * @since 0.1.0
 * @category requests
 */
export const send = (caller: ThreadCaller, operation: Lifecycle, trace?: TraceContext): Sent =>
  Thread.send(record(caller), operation, { trace })

/**
 * Stops waiting on a call: it is forgotten here, and whoever runs it is told to stop, with no answer.
 *
 * @since 0.1.0
 * @category requests
 */
export const abandon = (caller: ThreadCaller, sent: Sent): void => Thread.abandon(record(caller), sent)

/**
 * A worker's notifications from now on; the subscription is out before this returns (C30).
 *
 * @since 0.1.0
 * @category requests
 */
export const subscribe = (
  caller: ThreadCaller,
  workerId: string,
  capacity: number
): AsyncIterableIterator<Plane.ServerNotification> & AsyncDisposable =>
  subscribeOn<Plane.ServerNotification>(record(caller), workerId, capacity)

/**
 * A new subscription to a worker's notifications as a pull: each call asks the host for the next batch
 * (`Protocol.EventsBatch`), `end` forgets it there; the first call subscribes (C30).
 *
 * @since 0.1.0
 * @category requests
 */
export const subscription = (caller: ThreadCaller, workerId: string, capacity: number): ((end: boolean) => Sent) =>
  puller(record(caller), workerId, capacity)

const record = (caller: ThreadCaller): ThreadClient => caller as unknown as ThreadClient
