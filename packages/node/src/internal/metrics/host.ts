// C80
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Entry } from "../host/entry.js"
import type { Registry } from "../host/registry.js"
import * as Connection from "../shared/connection.js"
import * as KeepAlive from "../shared/keepAlive.js"
import * as Metrics from "./metrics.js"
import * as Tree from "./tree.js"

const serverOf = (entry: Entry): string => Metrics.serverOf(entry)

const states = ["opening", "ready", "failed", "closed"] as const

/** @internal */
export const recount = (registry: Registry): void => {
  if (!registry.defaults.metrics) return
  const counts = new Map<string, Record<(typeof states)[number], number>>()
  for (const server of Metrics.knownServers()) counts.set(server, { opening: 0, ready: 0, failed: 0, closed: 0 })
  const count = (entry: Entry) => {
    const server = serverOf(entry)
    let byState = counts.get(server)
    if (byState === undefined) {
      byState = { opening: 0, ready: 0, failed: 0, closed: 0 }
      counts.set(server, byState)
    }
    byState[Connection.stateOf(entry.life)]++
  }
  for (const entry of registry.opening) count(entry)
  for (const entry of registry.entries.values()) count(entry)
  for (const [server, byState] of counts) {
    // Closed workers are forgotten.
    for (const state of states) if (state !== "closed") Metrics.workersIn(server, state, byState[state])
  }
}

/** @internal */
export const opened = (registry: Registry, entry: Entry, startedMs: number, outcome: string): void => {
  if (!registry.defaults.metrics) return
  Metrics.opened(serverOf(entry), outcome, (Date.now() - startedMs) / 1000)
  recount(registry)
}

/** @internal */
export const closed = (registry: Registry, entry: Entry, startedMs: number, cleanup: CleanupSummary): void => {
  if (!registry.defaults.metrics) return
  const left = cleanup.activeProcesses > 0
  Metrics.closed(serverOf(entry), left ? "CloseFailed" : "closed", (Date.now() - startedMs) / 1000)
  Metrics.cleanedUp(serverOf(entry), left ? "processes_left" : "confirmed")
  recount(registry)
}

/** @internal */
export const defaultSampleInterval = Duration.seconds(10)

/** @internal */
export const minSampleInterval = Duration.seconds(1)

/** C81 @internal */
export const sampleTrees = (registry: Registry, interval: Duration.Duration): Effect.Effect<void> =>
  !registry.defaults.metrics || !Tree.available()
    ? Effect.void
    : Effect.forever(
        Effect.zipRight(
          Effect.sync(() => sampleOnce(registry)),
          KeepAlive.sleep(interval)
        )
      )

/** @internal */
export const sampleOnce = (registry: Registry): void => {
  const groups = new Map<number, Entry>()
  for (const entry of registry.entries.values()) {
    if (entry.pid !== null && !entry.http && Connection.stateOf(entry.life) === "ready") groups.set(entry.pid, entry)
  }
  const usage = Tree.sample(groups.keys())
  const byServer = new Map<string, { rss: number; cpu: number }>()
  for (const [pid, entry] of groups) {
    const tree = usage.get(pid) ?? { rssBytes: 0, cpuSeconds: 0 }
    entry.tree = tree
    const server = serverOf(entry)
    const sum = byServer.get(server) ?? { rss: 0, cpu: 0 }
    byServer.set(server, { rss: sum.rss + tree.rssBytes, cpu: sum.cpu + tree.cpuSeconds })
  }
  for (const [server, sum] of byServer) Metrics.treesSampled(server, sum.rss, sum.cpu)
  // A server whose last worker closed falls to zero.
  for (const server of sampled) if (!byServer.has(server)) Metrics.treesSampled(server, 0, 0)
  sampled.clear()
  for (const server of byServer.keys()) sampled.add(server)
}

const sampled = new Set<string>()
