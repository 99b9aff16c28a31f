// C7, C19, C20
import { type CleanupSummary, CloseFailed, DeliveryUnknown, emptyCleanup } from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Budget from "../shared/budget.js"
import * as HostEvents from "./events.js"
import * as ServerRequests from "./serverRequests.js"
import { confirmGone, lookup, markFailed, type Registry, routesEnded } from "./registry.js"
import * as Connection from "../shared/connection.js"
import { type Entry, forceEnd, statusOf } from "./entry.js"
import * as HostMetrics from "../metrics/host.js"

// C22a
const endPending = (entry: Entry) => {
  if (entry.pending === undefined) return
  const { requestId } = entry.pending
  Connection.settle(
    entry,
    requestId,
    Exit.fail(new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "interrupted", delivery: "unknown" }))
  )
  entry.port.postMessage({ _tag: "Cancel", requestId, reason: "interrupted" })
}

const closeEntry = (registry: Registry, entry: Entry, budgetMs: number): Effect.Effect<WorkerStatus, CloseFailed> =>
  Effect.gen(function* () {
    const started = Date.now()
    const running = yield* Budget.start(budgetMs)
    endPending(entry)
    let summary: CleanupSummary | undefined
    if (entry.threadAlive && entry.control !== undefined) {
      // `close` is uninterruptible; each step is interruptible for its timeout.
      const left = yield* Budget.left(running)
      summary = yield* entry.control
        .executeEffect(new OwnerProtocol.Close({ budgetMs: Math.floor(left * 0.8) }))
        .pipe(Effect.interruptible, Effect.timeout(left), Effect.option, Effect.map(Option.getOrUndefined))
    }
    // Past the budget the owner is forced.
    const thread = entry.thread
    yield* Scope.close(entry.scope, Exit.void).pipe(
      Effect.disconnect,
      Effect.interruptible,
      Effect.timeout(yield* Budget.left(running)),
      Effect.catchAll(() => Effect.sync(() => forceEnd(thread)))
    )
    // C19: whatever the owner said.
    const cleanup = entry.http
      ? (summary ?? emptyCleanup)
      : ServerRequests.mergedCleanup(yield* confirmGone(registry, entry, yield* Budget.left(running)), summary, started)
    if (cleanup.activeProcesses > 0) {
      // C20: `failed`, so a request is not_sent at once.
      markFailed(registry, entry, "closing", "close could not confirm that every process of the worker ended")
      Connection.recordCleanup(entry, cleanup)
      routesEnded(registry, entry)
      HostMetrics.closed(registry, entry, started, cleanup)
      return yield* new CloseFailed({
        workerId: entry.workerId,
        message: `${cleanup.activeProcesses} process(es) of the worker are still alive; call close again`,
        cleanup
      })
    }
    Connection.closed(entry, cleanup)
    HostEvents.endAll(entry)
    registry.entries.delete(entry.workerId)
    routesEnded(registry, entry)
    HostMetrics.closed(registry, entry, started, cleanup)
    yield* Effect.logWithLevel(registry.defaults.logLevel, "worker closed").pipe(
      Effect.annotateLogs({
        workerId: entry.workerId,
        state: Connection.stateOf(entry.life),
        durationMs: Date.now() - started
      })
    )
    return statusOf(entry)
  })

/** @internal */
export const close =
  (registry: Registry): McpWorkers.McpWorkersService["close"] =>
  (id, options) =>
    Effect.flatMap(lookup(registry, id), (entry) => {
      if (entry.life._tag === "Closing") return Deferred.await(entry.life.done)
      const closing = Deferred.unsafeMake<WorkerStatus, CloseFailed>(FiberId.none)
      Connection.beginClose(entry, closing)
      // Close has no InvalidInput to report.
      const budgetMs = Either.getOrUndefined(Budget.budgetOf(options?.timeout)) ?? registry.defaults.closeMs
      return closeEntry(registry, entry, budgetMs).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => Connection.endClose(entry)).pipe(Effect.zipRight(Deferred.done(closing, exit)))
        ),
        Effect.uninterruptible
      )
    }).pipe(Effect.withSpan("McpWorkers.close", { attributes: { workerId: id } }))

/** C7 @internal */
export const closeAll = (registry: Registry): Effect.Effect<void> =>
  Effect.forEach(
    Array.from(registry.entries.keys()),
    (id) =>
      close(registry)(id).pipe(
        Effect.catchAll((error) =>
          Effect.logError("worker could not be closed").pipe(Effect.annotateLogs({ workerId: id, error: error._tag }))
        )
      ),
    { concurrency: "unbounded", discard: true }
  )
