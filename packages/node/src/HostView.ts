/**
 * The operator's view of a host: one row per worker it holds (id, server, state, era, what it is busy with and for
 * how long, its requests by outcome, its last failure, its server tree's memory), read off the host's records. It is
 * a service of the host's own runtime (`NodeMcpWorkers.layerWithView`): no grant, socket peer or cluster runner can
 * reach it (C82).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as internal from "./internal/metrics/view.js"

/**
 * One worker, as the host holds it.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerRow {
  readonly workerId: string
  /** The name its open gave it (`OpenOptions.name`, an `openAll` entry's name). */
  readonly name: string | null
  /** The name the server reported, once open (data: show it, never run it). */
  readonly server: string | null
  readonly state: "opening" | "ready" | "failed" | "closed"
  readonly era: "legacy" | "modern" | null
  readonly isolation: "thread" | "process"
  /** The request in flight, and how long it has been (`null` where the host cannot time it). */
  readonly busy: { readonly requestId: string; readonly forMs: number | null } | null
  /** The worker's requests by how they ended; `null` when the host records no metrics. */
  readonly requests: {
    readonly results: number
    readonly isError: number
    readonly errors: number
    readonly notSent: number
    readonly unknown: number
  } | null
  readonly notifications: { readonly received: number; readonly dropped: number }
  readonly lastFailure: { readonly kind: string; readonly message: string; readonly at: string } | null
  /** The server tree's last sample (Linux, stdio servers); `null` before the first or elsewhere. */
  readonly tree: { readonly rssBytes: number; readonly cpuSeconds: number } | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HostViewService {
  /** Every worker the host holds, opening ones included. */
  readonly snapshot: Effect.Effect<ReadonlyArray<WorkerRow>>
}

/**
 * The host's view, provided by `NodeMcpWorkers.layerWithView` beside `McpWorkers`.
 *
 * @since 0.1.0
 * @category tags
 */
export const HostView: typeof internal.HostView = internal.HostView

/**
 * @since 0.1.0
 * @category tags
 */
export type HostView = internal.HostView
