/**
 * One connection's life, as the host keeps it for each worker and `McpClient` for its one connection: a tagged union
 * of its states, the request in flight, and what both do to them (fail, close, refuse, report). A state that cannot
 * be — closing and closed at once, a failure on a ready connection, a cleanup before the end — has no value here.
 *
 * @internal
 */
import {
  type CleanupSummary,
  type CloseFailed,
  type FailureKind,
  type RequestError,
  UnknownWorker,
  WorkerBusy,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import type { WorkerState, WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { types } from "node:util"
import type { Handlers } from "../../NodeMcpWorkers.js"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as ProcessJob from "../job/processJob.js"

/** Why a connection is gone: what failed, said without any data of the call. @internal */
export interface Failure {
  readonly kind: FailureKind
  readonly message: string
  readonly at: string
}

/** The server is starting, or completing `initialize`. @internal */
export interface Opening {
  readonly _tag: "Opening"
}

/** Requests may go. @internal */
export interface Ready {
  readonly _tag: "Ready"
}

/** The connection is gone; `close` still ends and confirms its process tree. @internal */
export interface Failed {
  readonly _tag: "Failed"
  readonly failure: Failure
  /** What a re-scan found left of its processes, once one ran. */
  readonly cleanup: CleanupSummary | null
}

/** A `close` runs (a second one joins `done`); the state it began in is what status shows meanwhile. @internal */
export interface Closing {
  readonly _tag: "Closing"
  readonly from: Ready | Failed
  readonly done: Deferred.Deferred<WorkerStatus, CloseFailed>
}

/** Closed: nothing of the server is left. @internal */
export interface Closed {
  readonly _tag: "Closed"
  readonly failure: Failure | null
  readonly cleanup: CleanupSummary | null
}

/** @internal */
export type Life = Opening | Ready | Failed | Closing | Closed

/** @internal */
export const opening: Opening = { _tag: "Opening" }

/** @internal */
export const ready: Ready = { _tag: "Ready" }

/** A server notification counted, as `status` shows it. @internal */
export interface Counters {
  received: number
  dropped: number
  readonly listChanged: { tools: string | null; resources: string | null; prompts: string | null }
}

/** Fresh counters of a new connection. @internal */
export const counters = (): Counters => ({
  received: 0,
  dropped: 0,
  listChanged: { tools: null, resources: null, prompts: null }
})

/** The request in flight on a connection. @internal */
export interface Pending {
  readonly requestId: string
  /** When the request was sent (epoch ms), for the host's view; absent where nothing shows it. */
  readonly since?: number | undefined
  readonly complete: (exit: Exit.Exit<unknown, RequestError>) => void
  /** The caller's progress callback, when it asked for progress. */
  readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined
  /** Who the server's questions during this request go to instead of the host's handlers (C151). */
  readonly ask?: Asker | undefined
}

/**
 * The answerer of a kind of server question asked during a request, `undefined` for a kind the caller does not take
 * (the host's handlers answer it). @internal
 */
export type Asker = (
  method: OwnerProtocol.ServerMethod
) => ((params: unknown) => Effect.Effect<unknown, unknown>) | undefined

/** Who holds a request in flight: a worker's record in the host, or an `McpClient`. @internal */
export interface Holder {
  readonly workerId: string
  pending: Pending | undefined
}

/** What the host keeps of a worker and `McpClient` of its connection alike. @internal */
export interface Connection extends Holder {
  readonly marker: string
  readonly http: boolean
  life: Life
  pid: number | null
  /** The protocol era the owner's client negotiated (C51). */
  era: "legacy" | "modern" | null
  protocolVersion: string | null
  server: { name: string; version: string } | null
  readonly notifications: Counters
}

const settled = (life: Life): Ready | Failed | Closed | Opening => (life._tag === "Closing" ? life.from : life)

/** The state `status` reports. @internal */
export const stateOf = (life: Life): WorkerState => {
  const shown = settled(life)
  return shown._tag === "Opening"
    ? "opening"
    : shown._tag === "Ready"
      ? "ready"
      : shown._tag === "Failed"
        ? "failed"
        : "closed"
}

/** The last failure, kept through the close that follows it. @internal */
export const failureOf = (life: Life): Failure | null => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed" ? shown.failure : null
}

/** @internal */
export const cleanupOf = (life: Life): CleanupSummary | null => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed" ? shown.cleanup : null
}

/** Failed or closed: a new `events` subscription ends at once. @internal */
export const isEnded = (life: Life): boolean => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed"
}

/**
 * A ready connection's connection is gone (also while a `close` of it runs). Whether it was ready: a failure is
 * recorded once, the first.
 *
 * @internal
 */
export const markFailed = (
  connection: Connection,
  kind: FailureKind,
  message: string,
  at = new Date().toISOString()
): boolean => {
  const life = connection.life
  const failed: Failed = { _tag: "Failed", failure: { kind, message, at }, cleanup: null }
  if (life._tag === "Ready") connection.life = failed
  else if (life._tag === "Closing" && life.from._tag === "Ready") connection.life = { ...life, from: failed }
  else return false
  return true
}

/** Records what a re-scan found left of the connection's processes. @internal */
export const recordCleanup = (connection: Connection, cleanup: CleanupSummary): void => {
  const life = connection.life
  if (life._tag === "Failed" || life._tag === "Closed") connection.life = { ...life, cleanup }
  else if (life._tag === "Closing" && life.from._tag === "Failed") {
    connection.life = { ...life, from: { ...life.from, cleanup } }
  }
}

/** A close begins; `undefined` when it cannot (one already runs, or nothing is left to close). @internal */
export const beginClose = (
  connection: Connection,
  done: Deferred.Deferred<WorkerStatus, CloseFailed>
): Closing | undefined => {
  const life = connection.life
  if (life._tag !== "Ready" && life._tag !== "Failed") return undefined
  const closing: Closing = { _tag: "Closing", from: life, done }
  connection.life = closing
  return closing
}

/** The close ended, confirmed: nothing of the server is left. @internal */
export const closed = (connection: Connection, cleanup: CleanupSummary | null): void => {
  connection.life = { _tag: "Closed", failure: failureOf(connection.life), cleanup }
}

/** The close ended without a confirmation: the connection is as it was before (failed, by then). @internal */
export const endClose = (connection: Connection): void => {
  const life = connection.life
  if (life._tag === "Closing") connection.life = life.from
}

/**
 * Why a request to the worker `id` must be refused before anything is sent: no connection of that id, or one that
 * would refuse it (`refusal`); `undefined` when it may go.
 *
 * @internal
 */
export const refusalOf = (id: string, connection: Connection | undefined): RequestError | undefined =>
  connection === undefined ? new UnknownWorker({ workerId: id }) : refusal(connection, "the worker is closing")

/** Why a request must be refused before anything is sent; `undefined` when it may go. @internal */
export const refusal = (connection: Connection, closingMessage: string): RequestError | undefined => {
  const { life, pending } = connection
  if (pending !== undefined) {
    return new WorkerBusy({ workerId: connection.workerId, requestId: pending.requestId, delivery: "not_sent" })
  }
  if (life._tag === "Ready") return undefined
  const closing = life._tag === "Closing" || life._tag === "Closed"
  const failure = failureOf(life)
  return new WorkerFailed({
    workerId: connection.workerId,
    kind: closing ? "closing" : (failure?.kind ?? "transport"),
    message: closing ? closingMessage : (failure?.message ?? "failed"),
    delivery: "not_sent"
  })
}

/** The status of a connection, read off its record. @internal */
export const statusOf = (
  connection: Connection,
  owner: { readonly threadId: number | null; readonly ownerPid: number | null }
): WorkerStatus => ({
  workerId: connection.workerId,
  state: stateOf(connection.life),
  busy: connection.pending !== undefined,
  requestId: connection.pending?.requestId ?? null,
  pid: connection.pid,
  threadId: owner.threadId,
  ownerPid: owner.ownerPid,
  era: connection.era,
  protocolVersion: connection.protocolVersion,
  server: connection.server,
  lastFailure: failureOf(connection.life),
  cleanup: cleanupOf(connection.life),
  notifications: {
    received: connection.notifications.received,
    dropped: connection.notifications.dropped,
    listChanged: { ...connection.notifications.listChanged }
  }
})

/** The raw result of a `Success` message. @internal */
export const resultOf = (message: typeof OwnerProtocol.SuccessMessage.Type): unknown => {
  const value = JsonValue.decodeUnsafe(message.result)
  return message.envelope ? (value as { result?: unknown }).result : value
}

/** Completes the request in flight with `exit`, if it is still the one named. @internal */
export const settle = (holder: Holder, requestId: string, exit: Exit.Exit<unknown, RequestError>) => {
  const pending = holder.pending
  // A late answer to a cancelled or timed-out request never becomes the result of another (C13).
  if (pending === undefined || pending.requestId !== requestId) return
  holder.pending = undefined
  pending.complete(exit)
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

/** A config's arguments are plain data: a `Proxy` is refused wherever inputs are checked. @internal */
export const isProxy = (u: unknown): boolean => types.isProxy(u)

/** The server requests a connection's client declares: those it has a handler for. @internal */
export const handlerNames = (handlers: Handlers): Array<"elicitation" | "sampling" | "roots"> =>
  (["elicitation", "sampling", "roots"] as const).filter((name) => handlers[name] !== undefined)

/** What the reaper is told of a job (`reaper.ts`). @internal */
export interface JobWatch {
  readonly forget: (marker: string) => void
}

/**
 * Re-scans for what is left of a stdio connection's processes (C19) and, once nothing is, tells the reaper to forget
 * the job.
 *
 * @internal
 */
export const confirmGone = (
  connection: Pick<Connection, "pid" | "marker">,
  cleanupScan: ProcessJobFace.CleanupScanService,
  reaper: JobWatch,
  budgetMs?: number
): Effect.Effect<CleanupSummary> =>
  Effect.tap(
    ProcessJob.stopDetached(
      { pgid: connection.pid ?? undefined, marker: connection.marker },
      budgetMs === undefined ? undefined : { budgetMs }
    ).pipe(Effect.provideService(ProcessJob.CleanupScan, cleanupScan)),
    (left) => Effect.sync(() => left.activeProcesses === 0 && reaper.forget(connection.marker))
  )

/**
 * Last resort for an exit that skips finalizers (`process.exit`): no server tree may outlive the process. `live`
 * lists the connections whose trees may still run.
 *
 * @internal
 */
export const exitHook = (live: () => Iterable<Pick<Connection, "pid" | "marker" | "life">>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const onExit = () => {
        for (const connection of live()) {
          if (connection.pid !== null && connection.life._tag !== "Closed") {
            ProcessJob.killGroupSync(connection.pid, connection.marker)
          }
        }
      }
      process.on("exit", onExit)
      return onExit
    }),
    (onExit) => Effect.sync(() => process.off("exit", onExit))
  )
