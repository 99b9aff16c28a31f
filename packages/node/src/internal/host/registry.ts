/**
 * The host registry's shared state — every worker's record, the platform's worker manager, the reaper, the
 * defaults — and what happens to a record when its owner thread speaks or dies. The operations live in `open.ts`,
 * `request.ts` and `close.ts`, each a function of this record; `service.ts` wires them.
 */
import type * as Worker from "@effect/platform/Worker"
import {
  type CleanupSummary,
  DeliveryUnknown,
  type FailureKind,
  type McpWorkerError,
  OpenFailed,
  UnknownWorker,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import type { Handlers, OAuthProvider } from "../../NodeMcpWorkers.js"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as HostEvents from "./events.js"
import * as ServerRequests from "./serverRequests.js"
import type * as Reaper from "./reaper.js"
import {
  confirmGone as confirmJobGone,
  isEnded,
  recordCleanup,
  refusalOf,
  markFailed as markLifeFailed,
  reportProgress,
  resultOf,
  settle
} from "../shared/connection.js"
import type { Entry } from "./entry.js"
import * as HostMetrics from "../metrics/host.js"
import * as Metrics from "../metrics/metrics.js"

/** The registry's defaults, validated. @internal */
export interface Defaults {
  readonly requestMs: number
  readonly openMs: number
  readonly closeMs: number
  readonly maxResultBytes: number | undefined
  readonly logLevel: LogLevel.LogLevel
  readonly handlers: Handlers
  /** The interactive OAuth client, and its settings as the owner gets them (JSON text). */
  readonly oauth: { readonly provider: OAuthProvider; readonly settings: string } | undefined
  /** Whether requests, opens and closes are recorded as metrics (C80). */
  readonly metrics: boolean
}

/** Everything the registry's operations share. @internal */
export interface Registry {
  readonly defaults: Defaults
  /** How the host counts what is left of a worker's processes. */
  readonly cleanupScan: ProcessJobFace.CleanupScanService
  /** The parent of every worker's scope. */
  readonly workersScope: Scope.Scope
  /** Open workers, by id. */
  readonly entries: Map<string, Entry>
  /** Workers whose open has not finished: not reachable by id yet, but their processes exist already. */
  readonly opening: Set<Entry>
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly manager: Worker.WorkerManager
  readonly reaper: Reaper.Reaper
  /** The `events` subscriptions of remote threads, by the remote's id for each. */
  readonly remoteSubscriptions: Map<string, HostEvents.RemoteSubscription>
  /** The host server's part in remote callers' requests that reach owner threads directly, while it runs. */
  remote: RemoteRoutes | undefined
}

/**
 * What the host server does for remote callers whose requests reach an owner thread directly.
 *
 * @internal
 */
export interface RemoteRoutes {
  /** Answers a remote caller's request that its owner thread took directly and the host's `cancel` ended. */
  readonly answer: (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) => void
  /** The owner has ended: each remote given the worker's route is told, with why. */
  readonly ended: (workerId: string, remotes: ReadonlyArray<string>, error: McpWorkerError) => void
}

/**
 * The worker's owner has ended (closed, or died): the remotes given its route learn it. A request of theirs still
 * waiting on the owner's channel may have been taken, so they answer it unknown (C22a).
 *
 * @internal
 */
export const routesEnded = (registry: Registry, entry: Entry): void => {
  // A `cancel` still waiting for the owner's word gets none: it cancelled nothing.
  for (const answer of entry.cancels.values()) answer(false)
  entry.cancels.clear()
  for (const synced of entry.syncs.values()) synced()
  entry.syncs.clear()
  if (entry.routes.size === 0) return
  const error =
    refusalOf(entry.workerId, registry.entries.get(entry.workerId)) ?? new UnknownWorker({ workerId: entry.workerId })
  const remotes = Array.from(entry.routes)
  entry.routes.clear()
  registry.remote?.ended(entry.workerId, remotes, error)
}

/** The open worker with this id. @internal */
export const lookup = (registry: Registry, id: string): Effect.Effect<Entry, UnknownWorker> => {
  const entry = registry.entries.get(id)
  return entry === undefined ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.succeed(entry)
}

/** A ready worker's connection is gone. @internal */
export const markFailed = (
  registry: Registry,
  entry: Entry,
  kind: FailureKind,
  message: string,
  at = new Date().toISOString()
): void => {
  if (!markLifeFailed(entry, kind, message, at)) return
  HostEvents.endAll(entry)
  HostMetrics.recount(registry)
  registry.runFork(Effect.logWarning("worker failed").pipe(Effect.annotateLogs({ workerId: entry.workerId, kind })))
}

/**
 * Re-scans for what is left of a stdio worker's processes (C19) and, once nothing is, tells the reaper to forget
 * the job.
 *
 * @internal
 */
export const confirmGone = (registry: Registry, entry: Entry, budgetMs?: number): Effect.Effect<CleanupSummary> =>
  confirmJobGone(entry, registry.cleanupScan, registry.reaper, budgetMs)

// An owner answers a `Sync` at once; one that does not within this long is stuck, and the host's record is read as is.
const syncWaitMs = 1_000

let nextSyncId = 0

/**
 * Waits until everything the worker's owner posted before now has been handled here, so that what the host records
 * of the owner's messages (notifications, counts of direct requests) includes what preceded a caller's answer, which
 * an owner thread posts to the caller on another channel (C30).
 *
 * @internal
 */
export const syncWithOwner = (entry: Entry): Effect.Effect<void> => {
  // Only an owner thread given to remote threads answers anyone on another channel; without them nothing can lag.
  if (entry.routes.size === 0 || !entry.threadAlive || isEnded(entry.life)) return Effect.void
  return Effect.async<void>((resume) => {
    const syncId = nextSyncId++
    entry.syncs.set(syncId, () => resume(Effect.void))
    entry.port.postMessage({ _tag: "Sync", syncId })
    return Effect.sync(() => entry.syncs.delete(syncId))
  }).pipe(Effect.timeoutTo({ duration: syncWaitMs, onSuccess: () => undefined, onTimeout: () => undefined }))
}

// The request the owner names is still this host's in flight (not ended, not a remote caller's taken directly).
const askerOf = (entry: Entry, requestId: string) =>
  entry.pending?.requestId === requestId ? entry.pending.ask : undefined

/** Handles one data-plane message of a worker's owner. @internal */
export const onOwnerMessage =
  (registry: Registry, entry: Entry) =>
  (raw: unknown): void => {
    const decoded = OwnerProtocol.decodeOwnerMessage(raw)
    if (Either.isLeft(decoded)) return
    const message = decoded.right
    switch (message._tag) {
      case "Success":
        return settle(entry, message.requestId, Exit.succeed(resultOf(message)))
      case "CancelAnswer": {
        // A `cancel` of a request the owner thread took from a remote caller: the `cancel` is answered, then (a turn
        // later, on the same channel) the caller, when the owner cancelled it (C12).
        const answer = entry.cancels.get(message.requestId)
        entry.cancels.delete(message.requestId)
        answer?.(message.cancelled)
        const { replyTo } = message
        if (!message.cancelled || replyTo === undefined) return
        const error = new DeliveryUnknown({
          workerId: entry.workerId,
          requestId: message.requestId,
          reason: "cancelled",
          delivery: "unknown"
        })
        setImmediate(() => registry.remote?.answer(replyTo, error))
        return
      }
      case "Observed":
        return Metrics.observed(entry, message.requests)
      case "Synced": {
        const synced = entry.syncs.get(message.syncId)
        entry.syncs.delete(message.syncId)
        return synced?.()
      }
      case "Failure":
        if (message.error._tag === "WorkerFailed") {
          markFailed(registry, entry, message.error.kind, message.error.message)
        }
        return settle(entry, message.requestId, Exit.fail(message.error))
      case "Spawned":
        entry.pid = message.pid
        registry.reaper.group(entry.marker, message.pid)
        return
      case "Failed":
        return markFailed(registry, entry, message.kind, message.message, message.at)
      case "Progress":
        return reportProgress(entry, registry.runFork, message.requestId, message.progress)
      case "ServerRequest":
        return ServerRequests.answer(
          {
            workerId: entry.workerId,
            handlers: registry.defaults.handlers,
            oauth: registry.defaults.oauth?.provider,
            // The user's authorization may take as long as an open may.
            timeoutMs:
              message.method === "oauth/authorize"
                ? Math.max(registry.defaults.openMs, registry.defaults.requestMs)
                : registry.defaults.requestMs,
            reply: (answer) => entry.port.postMessage(answer),
            runFork: registry.runFork,
            // C151: the owner names the request the server asked during; only the caller of that one is asked.
            ask: message.requestId !== undefined ? askerOf(entry, message.requestId) : undefined
          },
          message
        )
      case "Notification":
        return HostEvents.publish(entry, message)
    }
  }

/**
 * The owner thread or process died on its own (a crash, exhausted memory, a kill from outside): the worker is failed,
 * and the host itself ends its process tree (C20).
 *
 * @internal
 */
export const onThreadExit =
  (registry: Registry, entry: Entry) =>
  (code: number | null, signal?: string | null): void => {
    entry.threadAlive = false
    const owner = entry.ownerPid === null ? "thread" : "process"
    const how = signal ? `signal ${signal}` : `code ${code}`
    if (entry.life._tag === "Opening") {
      Deferred.unsafeDone(
        entry.threadFailure,
        Exit.fail(new OpenFailed({ stage: "thread", message: `the owner ${owner} exited during open (${how})` }))
      )
      return
    }
    if (entry.life._tag === "Closing") return
    const message = `the owner ${owner} exited (${how})`
    markFailed(registry, entry, "thread", message)
    if (entry.pending !== undefined) {
      const error = new WorkerFailed({
        workerId: entry.workerId,
        kind: "thread",
        message,
        delivery: "unknown"
      })
      settle(entry, entry.pending.requestId, Exit.fail(error))
    }
    routesEnded(registry, entry)
    registry.runFork(
      Effect.gen(function* () {
        // Closing the worker's scope stops the platform Worker from respawning the thread (C3).
        yield* Scope.close(entry.scope, Exit.void)
        if (!entry.http) recordCleanup(entry, yield* confirmGone(registry, entry))
      })
    )
  }
