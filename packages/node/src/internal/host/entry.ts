/**
 * The host's record of one worker, and what can be read off it without touching its owner thread.
 */
import type * as Worker from "@effect/platform/Worker"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as Deferred from "effect/Deferred"
import type * as Scope from "effect/Scope"
import * as Connection from "../shared/connection.js"
import * as ThreadProtocol from "../thread/protocol.js"
import type * as Metrics from "../metrics/metrics.js"
import type * as Tree from "../metrics/tree.js"
import type * as HostEvents from "./events.js"

/** The host's record of one worker: its connection's life (shared with `McpClient`) and its owner's. @internal */
export interface Entry extends Connection.Connection {
  readonly workerId: WorkerId.WorkerId
  readonly defaultTimeoutMs: number
  readonly scope: Scope.CloseableScope
  /** The data plane: a `MessagePort` to an owner thread, a `LinePort` to an owner process. */
  readonly port: DataPort
  /**
   * The remote threads (their reply channels) given this worker's `Route`: their requests may reach the owner thread
   * directly, and each is told when it ends (`WorkerEnded`).
   */
  readonly routes: Set<string>
  /** An owner thread's record of the request it took straight from a remote caller, read for `status` only. */
  slot: ThreadProtocol.Slot | undefined
  /** The `cancel`s of such requests waiting for the owner's word (`CancelAnswer`), by request id. */
  readonly cancels: Map<string, (cancelled: boolean) => void>
  /** The `status` reads waiting for the owner's `Synced`, by sync id. */
  readonly syncs: Map<number, () => void>
  /** The owner: a thread of this process, or a child process (`isolation: "process"`). */
  thread: OwnerHandle | undefined
  control: Worker.SerializedWorker<OwnerProtocol.ControlRequest> | undefined
  /** Whether the owner thread or process runs: it may die in any state of the connection. */
  threadAlive: boolean
  /** Fails an open at once when the owner cannot start or dies while the connection is opening. */
  readonly threadFailure: Deferred.Deferred<never, OpenFailed>
  threadId: number | null
  ownerPid: number | null
  /** What its server declares of tools, resources, prompts and completions, once open (C161). */
  serves?: OwnerProtocol.OpenInfo["serves"]
  /** Who listens to the server's notifications (`events`). */
  readonly subscribers: Set<HostEvents.Subscriber>
  /** The name its open gave the worker (`OpenOptions.name`, an `openAll` entry's), for its metrics and view. */
  readonly name: string | undefined
  /** Whether this worker's requests are recorded as metrics (the host's option, C80). */
  readonly metrics: boolean
  /** The worker's requests by how they ended, for the host's view (when metrics are on). */
  counts?: Metrics.Counts | undefined
  /** The server tree's last sample (Linux), for the host's view. */
  tree?: Tree.TreeUsage | undefined
  /** Whether its server runs tool calls as tasks, as the owner found when it opened (C156). */
  tasks?: boolean | undefined
}

/**
 * An owner as the host ends it: a `worker_threads` Worker (`terminate`) or a child process (`kill`). Structural, so
 * that the declarations name no Node type.
 *
 * @internal
 */
export type OwnerHandle =
  | { readonly terminate: () => Promise<number>; readonly unref: () => void }
  | {
      readonly kill: (signal: "SIGKILL") => boolean
      readonly unref: () => void
      readonly channel?: { readonly unref: () => void } | null | undefined
    }

/** The host's end of a worker's data plane. @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
  readonly unref: () => void
}

/**
 * The request an owner thread took straight from a remote caller, as the owner records it; none once the thread has
 * ended (what it held then is its remote's to answer, C22a).
 *
 * @internal
 */
export const heldDirect = (entry: Entry): ThreadProtocol.Held | undefined =>
  entry.slot === undefined || !entry.threadAlive ? undefined : ThreadProtocol.readSlot(entry.slot)

/** Ends an owner at once: `terminate()` for a thread, `SIGKILL` for a process. @internal */
export const forceEnd = (owner: OwnerHandle | undefined): void => {
  if (owner === undefined) return
  if ("terminate" in owner) void owner.terminate()
  else owner.kill("SIGKILL")
}

/**
 * The status of a worker, read off its record: the host's own request in flight, else the one its owner thread took
 * straight from a remote caller.
 *
 * @internal
 */
export const statusOf = (entry: Entry) => {
  const status = Connection.statusOf(entry, entry)
  if (status.busy) return status
  const held = heldDirect(entry)
  return held === undefined ? status : { ...status, busy: true, requestId: held.requestId }
}
