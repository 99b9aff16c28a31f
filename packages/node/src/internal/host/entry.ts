/**
 * The host's record of one worker, and what can be read off it without touching its owner thread.
 */
import type * as Worker from "@effect/platform/Worker"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import { type OpenFailed, type RequestError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as Deferred from "effect/Deferred"
import type * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import type { Worker as NodeThread } from "node:worker_threads"
import * as Connection from "../shared/connection.js"
import type * as Observe from "../metrics/observe.js"
import type * as Tree from "../metrics/tree.js"
import type * as HostEvents from "./events.js"

/** What a request ends with when its owner thread delivered the success to a remote caller itself. @internal */
export const delivered: unique symbol = Symbol.for("@mcp-worker/node/delivered")

/** The host's record of one worker: its connection's life (shared with `McpClient`) and its owner's. @internal */
export interface Entry extends Connection.Connection {
  readonly workerId: WorkerId.WorkerId
  readonly defaultTimeoutMs: number
  readonly scope: Scope.CloseableScope
  /** The data plane: a `MessagePort` to an owner thread, a `LinePort` to an owner process. */
  readonly port: DataPort
  /** Handles, at once, every message of the owner already waiting on the port; nothing for an owner process. */
  readAhead: () => void
  /**
   * The remote threads (their reply channels) given this worker's `Route`: their requests may reach the owner thread
   * directly, and each is told when it ends (`WorkerEnded`).
   */
  readonly routes: Set<string>
  /**
   * How many remote callers' requests the owner thread took directly (`Started`) that this host has read. Each request
   * of the host's carries it: the owner refuses one sent before the host knew of a request it took since (C8).
   */
  started: number
  /** The owner: a thread of this process, or a child process (`isolation: "process"`). */
  thread: NodeThread | ChildProcess | undefined
  control: Worker.SerializedWorker<OwnerProtocol.ControlRequest> | undefined
  /** Whether the owner thread or process runs: it may die in any state of the connection. */
  threadAlive: boolean
  /** Fails an open at once when the owner cannot start or dies while the connection is opening. */
  readonly threadFailure: Deferred.Deferred<never, OpenFailed>
  threadId: number | null
  ownerPid: number | null
  /** Who listens to the server's notifications (`events`). */
  readonly subscribers: Set<HostEvents.Subscriber>
  /** The name its open gave the worker (`OpenOptions.name`, an `openAll` entry's), for its metrics and view. */
  readonly name: string | undefined
  /** Whether this worker's requests are recorded as metrics (the host's option, C80). */
  readonly metrics: boolean
  /** The worker's requests by how they ended, for the host's view (when metrics are on). */
  counts?: Observe.Counts | undefined
  /** The server tree's last sample (Linux), for the host's view. */
  tree?: Tree.TreeUsage | undefined
  /** What the owner said of the success it just delivered to a remote caller, for that request's metrics. */
  delivered?: Observe.DeliveredNote | undefined
}

/** The host's end of a worker's data plane. @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
}

/**
 * Brings the record of the request in flight up to date with what the owner thread has already said, before anyone
 * reads it (a request's busy check, `status`, `cancel`, a timeout):
 *
 * - a request answered by the owner thread straight to its remote caller: the owner posted `Delivered` here before
 *   it posted the answer, so once anyone could know of the answer (the remote's next request, or any thread it
 *   told), `Delivered` waits on the port. It travels on another channel than the requests of remotes, and may be
 *   read after them: it is read now, so that the worker is not reported busy with a request that has ended (C8);
 * - a remote's request that reached the owner thread directly: the owner posted `Started` here before it sent it,
 *   so the worker is reported busy with exactly that request from the moment it could reach the server.
 *
 * Nothing happens while neither can be: no such request in flight, and no route given out.
 *
 * @internal
 */
export const readDelivered = (entry: Entry): void => {
  if (entry.pending?.direct !== undefined || entry.routes.size > 0) entry.readAhead()
}

/** Ends an owner at once: `terminate()` for a thread, `SIGKILL` for a process. @internal */
export const forceEnd = (owner: NodeThread | ChildProcess | undefined): void => {
  if (owner === undefined) return
  if ("terminate" in owner) void owner.terminate()
  else owner.kill("SIGKILL")
}

/** The status of a worker, read off its record. @internal */
export const statusOf = (entry: Entry) => Connection.statusOf(entry, entry)

/**
 * Why a request must be refused before anything is sent: the id is unknown, a request is in flight, or the
 * connection is gone. `undefined` when it may go.
 *
 * @internal
 */
export const refusal = (id: string, entry: Entry | undefined): RequestError | undefined =>
  entry === undefined ? new UnknownWorker({ workerId: id }) : Connection.refusal(entry, "the worker is closing")
