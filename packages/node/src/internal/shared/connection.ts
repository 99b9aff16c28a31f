// Impossible states have no value here.
import {
  type CleanupSummary,
  type CloseFailed,
  DeliveryUnknown,
  type FailureKind,
  type RequestError,
  UnknownWorker,
  WorkerBusy,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { WorkerState, WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { types } from "node:util"
import type { Handlers } from "../../NodeMcpWorkers.js"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as ProcessJob from "../job/processJob.js"

/** Holds no data of the call. @internal */
export interface Failure {
  readonly kind: FailureKind
  readonly message: string
  readonly at: string
}

/** @internal */
export interface Opening {
  readonly _tag: "Opening"
}

/** @internal */
export interface Ready {
  readonly _tag: "Ready"
}

/** `close` still ends and confirms the tree. @internal */
export interface Failed {
  readonly _tag: "Failed"
  readonly failure: Failure
  readonly cleanup: CleanupSummary | null
}

/** A second `close` joins `done`. @internal */
export interface Closing {
  readonly _tag: "Closing"
  readonly from: Ready | Failed
  readonly done: Deferred.Deferred<WorkerStatus, CloseFailed>
}

/** @internal */
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

/** @internal */
export interface Counters {
  received: number
  dropped: number
  readonly listChanged: { tools: string | null; resources: string | null; prompts: string | null }
}

/** @internal */
export const counters = (): Counters => ({
  received: 0,
  dropped: 0,
  listChanged: { tools: null, resources: null, prompts: null }
})

/** @internal */
export interface Pending {
  readonly requestId: string
  /** Epoch ms. */
  readonly since?: number | undefined
  readonly complete: (exit: Exit.Exit<unknown, RequestError>) => void
  readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined
  /** C151 */
  readonly ask?: Asker | undefined
  /** C22a: it was sent, so its outcome is unknown; nothing if it had already ended. */
  readonly unknown: (reason: CancelReason) => void
}

/** @internal */
export type CancelReason = (typeof OwnerProtocol.CancelMessage.Type)["reason"]

/** `undefined`: the host's handlers answer that kind. @internal */
export type Asker = (
  method: OwnerProtocol.ServerMethod
) => ((params: unknown) => Effect.Effect<unknown, unknown>) | undefined

/** @internal */
export interface Holder {
  readonly workerId: string
  pending: Pending | undefined
}

/** @internal */
export interface Connection extends Holder {
  readonly marker: string
  readonly http: boolean
  life: Life
  pid: number | null
  /** C51 */
  era: "legacy" | "modern" | null
  protocolVersion: string | null
  server: { name: string; version: string } | null
  readonly notifications: Counters
}

const settled = (life: Life): Ready | Failed | Closed | Opening => (life._tag === "Closing" ? life.from : life)

/** @internal */
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

/** Kept through the close that follows. @internal */
export const failureOf = (life: Life): Failure | null => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed" ? shown.failure : null
}

/** @internal */
export const cleanupOf = (life: Life): CleanupSummary | null => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed" ? shown.cleanup : null
}

/** @internal */
export const isEnded = (life: Life): boolean => {
  const shown = settled(life)
  return shown._tag === "Failed" || shown._tag === "Closed"
}

/** Only the first failure is recorded. @internal */
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

/** @internal */
export const recordCleanup = (connection: Connection, cleanup: CleanupSummary): void => {
  const life = connection.life
  if (life._tag === "Failed" || life._tag === "Closed") connection.life = { ...life, cleanup }
  else if (life._tag === "Closing" && life.from._tag === "Failed") {
    connection.life = { ...life, from: { ...life.from, cleanup } }
  }
}

/** `undefined`: one already runs or nothing is left. @internal */
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

/** @internal */
export const closed = (connection: Connection, cleanup: CleanupSummary | null): void => {
  connection.life = { _tag: "Closed", failure: failureOf(connection.life), cleanup }
}

/** The connection stays as it was. @internal */
export const endClose = (connection: Connection): void => {
  const life = connection.life
  if (life._tag === "Closing") connection.life = life.from
}

/** @internal */
export const refusalOf = (id: string, connection: Connection | undefined): RequestError | undefined =>
  connection === undefined ? new UnknownWorker({ workerId: id }) : refusal(connection, "the worker is closing")

/** @internal */
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

/** @internal */
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

/** @internal */
export const resultOf = (message: typeof OwnerProtocol.SuccessMessage.Type): unknown => {
  const value = JsonValue.decodeUnsafe(message.result)
  return message.envelope ? (value as { result?: unknown }).result : value
}

/** @internal */
export const settle = (holder: Holder, requestId: string, exit: Exit.Exit<unknown, RequestError>) => {
  const pending = holder.pending
  // C13
  if (pending === undefined || pending.requestId !== requestId) return
  holder.pending = undefined
  pending.complete(exit)
}

/** A throw is logged, never let into the owner's message handling. @internal */
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

/**
 * A request holding its connection's slot. One object per request and no closures, as it is made on every call; a
 * holder only says where its `Cancel` goes.
 *
 * @internal
 */
export abstract class InFlight<H extends Holder> implements Pending {
  timer: ReturnType<typeof setTimeout> | undefined = undefined
  signal: AbortSignal | undefined = undefined
  onAbort: (() => void) | undefined = undefined
  constructor(
    readonly holder: H,
    readonly requestId: string,
    readonly resume: (exit: Exit.Exit<unknown, RequestError>) => void,
    readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
    readonly ask: Asker | undefined
  ) {}

  protected abstract post(cancel: typeof OwnerProtocol.CancelMessage.Encoded): void

  /** Also from a cancel or close that ended the request: they have given up the slot. */
  complete(exit: Exit.Exit<unknown, RequestError>): void {
    this.disarm()
    this.resume(exit)
  }

  /** The owner cancels exactly it. `false` if it had already ended. */
  end(reason: CancelReason): boolean {
    const holder = this.holder
    if (holder.pending !== this) return false
    holder.pending = undefined
    this.disarm()
    this.post({ _tag: "Cancel", requestId: this.requestId, reason })
    return true
  }

  unknown(reason: CancelReason): void {
    if (!this.end(reason)) return
    const { holder, requestId } = this
    this.resume(Exit.fail(new DeliveryUnknown({ workerId: holder.workerId, requestId, reason, delivery: "unknown" })))
  }

  /** C66 */
  abortOn(signal: AbortSignal): void {
    this.signal = signal
    this.onAbort = () => this.unknown("interrupted")
    signal.addEventListener("abort", this.onAbort, { once: true })
  }

  private disarm(): void {
    clearTimeout(this.timer)
    if (this.onAbort !== undefined) this.signal!.removeEventListener("abort", this.onAbort)
  }
}

/** What the owner's messages need of the one that holds the connection, besides the connection. @internal */
export interface OwnerSide {
  readonly reaper: { readonly group: (marker: string, pgid: number) => void }
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => unknown
}

type Shared = "Success" | "Failure" | "Spawned" | "Failed" | "Progress"

/**
 * The owner's messages that mean the same to the host and to `McpClient`; any other comes back decoded, for the
 * holder's own handling.
 *
 * @internal
 */
export const onOwnerMessage = <C extends Connection>(
  connection: C,
  raw: unknown,
  side: OwnerSide,
  markFailed: (connection: C, kind: FailureKind, message: string, at?: string) => void
): Exclude<OwnerProtocol.OwnerMessage, { readonly _tag: Shared }> | undefined => {
  const decoded = OwnerProtocol.decodeOwnerMessage(raw)
  if (Either.isLeft(decoded)) return undefined
  const message = decoded.right
  switch (message._tag) {
    case "Success":
      settle(connection, message.requestId, Exit.succeed(resultOf(message)))
      return undefined
    case "Failure":
      if (message.error._tag === "WorkerFailed") markFailed(connection, message.error.kind, message.error.message)
      settle(connection, message.requestId, Exit.fail(message.error))
      return undefined
    case "Spawned":
      connection.pid = message.pid
      side.reaper.group(connection.marker, message.pid)
      return undefined
    case "Failed":
      markFailed(connection, message.kind, message.message, message.at)
      return undefined
    case "Progress":
      reportProgress(connection, side.runFork, message.requestId, message.progress)
      return undefined
    default:
      return message
  }
}

/** @internal */
export const isProxy = (u: unknown): boolean => types.isProxy(u)

/** @internal */
export const handlerNames = (handlers: Handlers): Array<"elicitation" | "sampling" | "roots"> =>
  (["elicitation", "sampling", "roots"] as const).filter((name) => handlers[name] !== undefined)

/** @internal */
export interface JobWatch {
  readonly forget: (marker: string) => void
}

/** C19 @internal */
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

/** process.exit skips finalizers. @internal */
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
