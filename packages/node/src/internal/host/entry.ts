/**
 * The host's record of one worker, and what can be read off it without touching its owner thread.
 */
import type * as Worker from "@effect/platform/Worker"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import {
  type CleanupSummary,
  type CloseFailed,
  type FailureKind,
  type OpenFailed,
  type RequestError,
  UnknownWorker,
  WorkerBusy,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type { WorkerState, WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import type * as HostEvents from "./events.js"
import type { ChildProcess } from "node:child_process"
import type { Worker as NodeThread } from "node:worker_threads"

/**
 * A remote caller whose call's success the owner thread posts itself (`OwnerProtocol.ReplyTo`): its reply channel
 * and the call's number there.
 *
 * @internal
 */
export type Direct = OwnerProtocol.ReplyTo

/** What a request ends with when its owner thread delivered the success to a remote caller itself. @internal */
export const delivered: unique symbol = Symbol.for("@mcp-worker/node/delivered")

/** The request in flight on a worker. @internal */
export interface Pending {
  readonly requestId: string
  /** The remote caller the owner thread answers itself, if it does. */
  readonly direct: Direct | undefined
  readonly complete: (exit: Exit.Exit<unknown, RequestError>) => void
  /** The caller's progress callback, when it asked for progress. */
  readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined
  /** A `cancel` waiting for the owner thread to say whether it cancelled this request (`CancelAnswer`). */
  cancelling?: ((cancelled: boolean) => void) | undefined
}

/** The host's record of one worker. @internal */
export interface Entry {
  readonly workerId: WorkerId.WorkerId
  readonly marker: string
  readonly defaultTimeoutMs: number
  readonly http: boolean
  readonly scope: Scope.CloseableScope
  /** The data plane: a `MessagePort` to an owner thread, a `LinePort` to an owner process. */
  readonly port: DataPort
  /** Handles, at once, every message of the owner already waiting on the port; nothing for an owner process. */
  readAhead: () => void
  /**
   * The remote threads (their reply channels) given this worker's `Route`: their requests may reach the owner thread
   * directly, and each is told when it ends (`WorkerEnded`).
   */
  readonly routes: Set<string>
  /**
   * How many remote callers' requests the owner thread took directly (`Started`) that this host has read. Each request
   * of the host's carries it: the owner refuses one sent before the host knew of a request it took since (C8).
   */
  started: number
  /** The owner: a thread of this process, or a child process (`isolation: "process"`). */
  thread: NodeThread | ChildProcess | undefined
  control: Worker.SerializedWorker<OwnerProtocol.ControlRequest> | undefined
  state: WorkerState
  threadAlive: boolean
  closing: Deferred.Deferred<WorkerStatus, CloseFailed> | undefined
  readonly threadFailure: Deferred.Deferred<never, OpenFailed>
  pending: Pending | undefined
  pid: number | null
  threadId: number | null
  ownerPid: number | null
  protocolVersion: string | null
  server: { name: string; version: string } | null
  lastFailure: { kind: FailureKind; message: string; at: string } | null
  cleanup: CleanupSummary | null
  /** The server's notifications so far, as `status` shows them. */
  readonly notifications: HostEvents.Counters
  /** Who listens to them (`events`). */
  readonly subscribers: Set<HostEvents.Subscriber>
  /** The worker closed or failed: a new subscription ends at once. */
  ended: boolean
}

/** The host's end of a worker's data plane. @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
}

/**
 * Brings the record of the request in flight up to date with what the owner thread has already said, before anyone
 * reads it (a request's busy check, `status`, `cancel`, a timeout):
 *
 * - a request answered by the owner thread straight to its remote caller: the owner posted `Delivered` here before
 *   it posted the answer, so once anyone could know of the answer (the remote's next request, or any thread it
 *   told), `Delivered` waits on the port. It travels on another channel than the requests of remotes, and may be
 *   read after them: it is read now, so that the worker is not reported busy with a request that has ended (C8);
 * - a remote's request that reached the owner thread directly: the owner posted `Started` here before it sent it,
 *   so the worker is reported busy with exactly that request from the moment it could reach the server.
 *
 * Nothing happens while neither can be: no such request in flight, and no route given out.
 *
 * @internal
 */
export const readDelivered = (entry: Entry): void => {
  if (entry.pending?.direct !== undefined || entry.routes.size > 0) entry.readAhead()
}

/** Ends an owner at once: `terminate()` for a thread, `SIGKILL` for a process. @internal */
export const forceEnd = (owner: NodeThread | ChildProcess | undefined): void => {
  if (owner === undefined) return
  if ("terminate" in owner) void owner.terminate()
  else owner.kill("SIGKILL")
}

/** The raw result of a `Success` message. @internal */
export const resultOf = (message: typeof OwnerProtocol.SuccessMessage.Type): unknown => {
  const value = JsonValue.decodeUnsafe(message.result)
  return message.envelope ? (value as { result?: unknown }).result : value
}

/** The status of a worker, read off its record. @internal */
export const statusOf = (entry: Entry): WorkerStatus => ({
  workerId: entry.workerId,
  state: entry.state,
  busy: entry.pending !== undefined,
  requestId: entry.pending?.requestId ?? null,
  pid: entry.pid,
  threadId: entry.threadId,
  ownerPid: entry.ownerPid,
  protocolVersion: entry.protocolVersion,
  server: entry.server,
  lastFailure: entry.lastFailure,
  cleanup: entry.cleanup,
  notifications: {
    received: entry.notifications.received,
    dropped: entry.notifications.dropped,
    listChanged: { ...entry.notifications.listChanged }
  }
})

/** Who holds a request in flight: a worker's record in the host, or an `McpClient`. @internal */
export interface Holder {
  readonly workerId: string
  pending: Pending | undefined
}

/** Completes the request in flight with `exit`, if it is still the one named. @internal */
export const settle = (entry: Holder, requestId: string, exit: Exit.Exit<unknown, RequestError>) => {
  const pending = entry.pending
  // A late answer to a cancelled or timed-out request never becomes the result of another (C13).
  if (pending === undefined || pending.requestId !== requestId) return
  entry.pending = undefined
  pending.complete(exit)
  // It ended otherwise than by a `cancel` that waits for the owner's word: that `cancel` cancelled nothing.
  answerCancel(pending, false)
}

/** Answers the `cancel` waiting on `pending`, if one is. @internal */
export const answerCancel = (pending: Pending, cancelled: boolean): void => {
  const cancelling = pending.cancelling
  if (cancelling === undefined) return
  pending.cancelling = undefined
  cancelling(cancelled)
}

/**
 * Why a request must be refused before anything is sent: the id is unknown, a request is in flight, or the
 * connection is gone. `undefined` when it may go.
 *
 * @internal
 */
export const refusal = (id: string, entry: Entry | undefined): RequestError | undefined => {
  if (entry === undefined) return new UnknownWorker({ workerId: id })
  if (entry.pending !== undefined) {
    return new WorkerBusy({ workerId: entry.workerId, requestId: entry.pending.requestId, delivery: "not_sent" })
  }
  if (entry.state !== "ready" || entry.closing !== undefined) {
    return new WorkerFailed({
      workerId: entry.workerId,
      kind: entry.closing !== undefined ? "closing" : (entry.lastFailure?.kind ?? "transport"),
      message: entry.closing !== undefined ? "the worker is closing" : (entry.lastFailure?.message ?? "failed"),
      delivery: "not_sent"
    })
  }
  return undefined
}

/**
 * Hands a progress notification to the caller of the request in flight, if it is still that request. The callback
 * is the caller's code: what it throws is logged, never allowed into the handling of the owner's messages.
 *
 * @internal
 */
export const reportProgress = (
  holder: Holder,
  runFork: <A, E>(effect: Effect.Effect<A, E>) => unknown,
  requestId: string,
  progress: OwnerProtocol.Progress
): void => {
  const pending = holder.pending
  if (pending?.onProgress === undefined || pending.requestId !== requestId) return
  try {
    pending.onProgress(progress)
  } catch (error) {
    runFork(
      Effect.logWarning("an onProgress callback threw").pipe(
        Effect.annotateLogs({ workerId: holder.workerId, error: error instanceof Error ? error.name : typeof error })
      )
    )
  }
}
