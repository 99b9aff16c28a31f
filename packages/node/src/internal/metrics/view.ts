/**
 * The host's view of its workers: one row per worker it holds, read off the records without touching an owner. Only
 * the host's own runtime can have it; no grant, socket or runner reaches it (C82).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HostViewFace from "../../HostView.js"
import { type Entry, readDelivered } from "../host/entry.js"
import type { Registry } from "../host/registry.js"
import * as Connection from "../shared/connection.js"

/** @internal */
export class HostView extends Context.Tag("@mcp-worker/node/HostView")<HostView, HostViewFace.HostViewService>() {}

const rowOf = (entry: Entry, now: number): HostViewFace.WorkerRow => {
  const pending = entry.pending
  return {
    workerId: entry.workerId,
    name: entry.name ?? null,
    server: entry.server?.name ?? null,
    state: Connection.stateOf(entry.life),
    era: entry.era,
    isolation: entry.ownerPid === null ? "thread" : "process",
    busy:
      pending === undefined
        ? null
        : { requestId: pending.requestId, forMs: pending.since === undefined ? null : now - pending.since },
    requests: entry.counts === undefined ? null : { ...entry.counts },
    notifications: { received: entry.notifications.received, dropped: entry.notifications.dropped },
    lastFailure: Connection.failureOf(entry.life),
    tree: entry.tree === undefined ? null : { ...entry.tree }
  }
}

/** Every worker the host holds, opening ones included. @internal */
export const snapshotOf = (registry: Registry): ReadonlyArray<HostViewFace.WorkerRow> => {
  const now = Date.now()
  // As `status` does: a request an owner thread took or delivered since is shown as it stands.
  for (const entry of registry.entries.values()) readDelivered(entry)
  return [...registry.opening, ...registry.entries.values()].map((entry) => rowOf(entry, now))
}

/** The view's service over a registry. @internal */
export const make = (registry: Registry): HostViewFace.HostViewService => ({
  snapshot: Effect.sync(() => snapshotOf(registry))
})
