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
  onOwnerMessage as onSharedMessage,
  settle
} from "../shared/connection.js"
import type { Entry } from "./entry.js"
import * as HostMetrics from "../metrics/host.js"
import * as Metrics from "../metrics/metrics.js"

/** @internal */
export interface Defaults {
  readonly requestMs: number
  readonly openMs: number
  readonly closeMs: number
  readonly maxResultBytes: number | undefined
  readonly logLevel: LogLevel.LogLevel
  readonly handlers: Handlers
  readonly oauth: { readonly provider: OAuthProvider; readonly settings: string } | undefined
  /** C80 */
  readonly metrics: boolean
}

/** @internal */
export interface Registry {
  readonly defaults: Defaults
  readonly cleanupScan: ProcessJobFace.CleanupScanService
  readonly workersScope: Scope.Scope
  readonly entries: Map<string, Entry>
  /** Not reachable by id yet, but their processes exist already. */
  readonly opening: Set<Entry>
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly manager: Worker.WorkerManager
  readonly reaper: Reaper.Reaper
  readonly remoteSubscriptions: Map<string, HostEvents.RemoteSubscription>
  remote: RemoteRoutes | undefined
}

/** @internal */
export interface RemoteRoutes {
  readonly answer: (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) => void
  readonly ended: (workerId: string, remotes: ReadonlyArray<string>, error: McpWorkerError) => void
}

/** C22a: a remote's request still on the owner's channel may have been taken. @internal */
export const routesEnded = (registry: Registry, entry: Entry): void => {
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

/** @internal */
export const lookup = (registry: Registry, id: string): Effect.Effect<Entry, UnknownWorker> => {
  const entry = registry.entries.get(id)
  return entry === undefined ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.succeed(entry)
}

/** @internal */
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

/** C19 @internal */
export const confirmGone = (registry: Registry, entry: Entry, budgetMs?: number): Effect.Effect<CleanupSummary> =>
  confirmJobGone(entry, registry.cleanupScan, registry.reaper, budgetMs)

// An owner answers at once; past this it is stuck, and the record is read as is.
const syncWaitMs = 1_000

let nextSyncId = 0

/** C30: an owner thread answers remote callers on another channel, so this record may lag their answers. @internal */
export const syncWithOwner = (entry: Entry): Effect.Effect<void> => {
  if (entry.routes.size === 0 || !entry.threadAlive || isEnded(entry.life)) return Effect.void
  return Effect.async<void>((resume) => {
    const syncId = nextSyncId++
    entry.syncs.set(syncId, () => resume(Effect.void))
    entry.port.postMessage({ _tag: "Sync", syncId })
    return Effect.sync(() => entry.syncs.delete(syncId))
  }).pipe(Effect.timeoutTo({ duration: syncWaitMs, onSuccess: () => undefined, onTimeout: () => undefined }))
}

// Not a request already ended, nor one a remote caller's owner thread took directly.
const askerOf = (entry: Entry, requestId: string) =>
  entry.pending?.requestId === requestId ? entry.pending.ask : undefined

/** @internal */
export const onOwnerMessage = (registry: Registry, entry: Entry) => {
  const failed = (failing: Entry, kind: FailureKind, message: string, at?: string) =>
    markFailed(registry, failing, kind, message, at)
  return (raw: unknown): void => {
    const message = onSharedMessage(entry, raw, registry, failed)
    switch (message?._tag) {
      case "CancelAnswer": {
        // C12: the `cancel` is answered a turn before the caller it cancelled.
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
}

/** C20 @internal */
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
        // C3: stops the platform Worker from respawning the thread.
        yield* Scope.close(entry.scope, Exit.void)
        if (!entry.http) recordCleanup(entry, yield* confirmGone(registry, entry))
      })
    )
  }
