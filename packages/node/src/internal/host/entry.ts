import type * as Worker from "@effect/platform/Worker"
import { type Held, readSlot, type Slot } from "../thread/owner.js"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as Deferred from "effect/Deferred"
import type * as Scope from "effect/Scope"
import * as Connection from "../shared/connection.js"
import type * as Metrics from "../metrics/metrics.js"
import type * as Tree from "../metrics/tree.js"
import type * as HostEvents from "./events.js"

/** @internal */
export interface Entry extends Connection.Connection {
  readonly workerId: WorkerId.WorkerId
  readonly defaultTimeoutMs: number
  readonly scope: Scope.CloseableScope
  readonly port: DataPort
  /** Each is told `WorkerEnded`. */
  readonly routes: Set<string>
  /** The owner thread alone writes it. */
  slot: Slot | undefined
  readonly cancels: Map<string, (cancelled: boolean) => void>
  readonly syncs: Map<number, () => void>
  thread: OwnerHandle | undefined
  control: Worker.SerializedWorker<OwnerProtocol.ControlRequest> | undefined
  /** The owner may die in any of them. */
  threadAlive: boolean
  readonly threadFailure: Deferred.Deferred<never, OpenFailed>
  threadId: number | null
  ownerPid: number | null
  /** C161 */
  serves?: OwnerProtocol.OpenInfo["serves"]
  readonly subscribers: Set<HostEvents.Subscriber>
  readonly name: string | undefined
  /** C80 */
  readonly metrics: boolean
  counts?: Metrics.Counts | undefined
  tree?: Tree.TreeUsage | undefined
  /** C156 */
  tasks?: boolean | undefined
}

/** Structural, so declarations name no Node type. @internal */
export type OwnerHandle =
  | { readonly terminate: () => Promise<number>; readonly unref: () => void }
  | {
      readonly kill: (signal: "SIGKILL") => boolean
      readonly unref: () => void
      readonly channel?: { readonly unref: () => void } | null | undefined
    }

/** @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
  readonly unref: () => void
}

/** C22a: none once the thread ended. @internal */
export const heldDirect = (entry: Entry): Held | undefined =>
  entry.slot === undefined || !entry.threadAlive ? undefined : readSlot(entry.slot)

/** @internal */
export const forceEnd = (owner: OwnerHandle | undefined): void => {
  if (owner === undefined) return
  if ("terminate" in owner) void owner.terminate()
  else owner.kill("SIGKILL")
}

/** @internal */
export const statusOf = (entry: Entry) => {
  const status = Connection.statusOf(entry, entry)
  if (status.busy) return status
  const held = heldDirect(entry)
  return held === undefined ? status : { ...status, busy: true, requestId: held.requestId }
}
