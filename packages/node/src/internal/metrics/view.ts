// C82
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HostViewFace from "../../HostView.js"
import { type Entry, heldDirect } from "../host/entry.js"
import type { Registry } from "../host/registry.js"
import * as Connection from "../shared/connection.js"

/** @internal */
export class HostView extends Context.Tag("@mcp-worker/node/HostView")<HostView, HostViewFace.HostViewService>() {}

const rowOf = (entry: Entry, now: number): HostViewFace.WorkerRow => {
  // Else the request its owner thread took from a remote caller.
  const pending = entry.pending ?? heldDirect(entry)
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

/** @internal */
export const snapshotOf = (registry: Registry): ReadonlyArray<HostViewFace.WorkerRow> => {
  const now = Date.now()
  return [...registry.opening, ...registry.entries.values()].map((entry) => rowOf(entry, now))
}

/** @internal */
export const make = (registry: Registry): HostViewFace.HostViewService => ({
  snapshot: Effect.sync(() => snapshotOf(registry))
})
