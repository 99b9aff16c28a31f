/**
 * A stdio MCP server started as a process-tree job: its whole tree can be ended, and the end confirmed,
 * without touching any other process.
 *
 * How the tree is known (Linux, the tested platform): the server runs in its own process group
 * (`detached: true`, so `pgid === pid`) and every process of the tree inherits the environment variable
 * `MCP_WORKER_JOB=<marker>`. A descendant that calls `setsid`/`setpgid` leaves the group but keeps the
 * variable, so it is still found by reading `/proc/<pid>/environ`.
 *
 * Limits, said plainly:
 * - A process that both left the group AND removed the marker from its environment (for example
 *   `setsid env -u MCP_WORKER_JOB …`, or an `exec` with a fresh environment) cannot be tracked.
 * - macOS and other POSIX systems without `/proc` (and Linux with `MCPW_PROCESS_SCAN=posix`, C100): `ps` lists
 *   every process's group and parent, not its environment, so a descendant that left the group is found by
 *   descent, and only while its parent chain to the group is intact or once a scan of this thread has seen it.
 * - Windows (C101): `taskkill /T /F /PID <pid>` ends the tree Windows knows about; the confirmation only checks
 *   the root process. Not run by the suite.
 *
 * @since 0.1.0
 */
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as internal from "./internal/job/processJob.js"
import * as Scan from "./internal/job/scan.js"
import * as Stop from "./internal/job/stop.js"

/**
 * A pipe of the job's root process, as far as a job's user needs it. Node's streams are ones: the declarations name
 * no Node type, so a program type-checks without `@types/node`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pipe {
  readonly destroyed: boolean
  readonly destroy: () => unknown
}

/**
 * The job's root process, as Node's `ChildProcess` is seen from a job (a `ChildProcess` is one): its id, how it
 * ended, and its pipes.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChildProcess {
  readonly pid?: number | undefined
  readonly exitCode: number | null
  readonly signalCode: string | null
  readonly stdin: Pipe | null
  readonly stdout: Pipe | null
  readonly stderr: Pipe | null
}

/**
 * The environment variable that carries the job marker through the whole process tree.
 *
 * @since 0.1.0
 * @category constants
 */
export const markerVariable: "MCP_WORKER_JOB" = Scan.markerVariable

/**
 * The default budget of `stop`, in milliseconds (the default budget of `close`, C19).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBudgetMs: number = Stop.defaultBudgetMs

/**
 * What to start. `env` is the complete environment of the server (nothing is inherited); the marker is added.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpawnOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd?: string | undefined
  readonly marker: string
}

/**
 * How the root child ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitInfo {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * A running process-tree job. The transport owns the reading and writing of `child`'s pipes.
 *
 * `stop` never fails: (1) end stdin, grace min(200 ms, 10% of the budget); (2) SIGTERM the group, wait up to
 * 40% of the budget for the group to empty; (3) SIGKILL the group and every process still carrying the marker
 * (those outside the group count as `escaped`); (4) re-scan until nothing is left or the budget is spent.
 * `signalled` counts signals sent (one per group signal, one per single process), and `activeProcesses` is what
 * the last scan still found. After a confirmed stop the stdout/stderr pipes are destroyed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessJob {
  readonly child: ChildProcess
  readonly pid: number
  readonly pgid: number
  readonly marker: string
  readonly stop: (options?: StopOptions) => Effect.Effect<CleanupSummary>
  readonly exited: Effect.Effect<ExitInfo>
}

/**
 * Options of `stop` and `stopDetached`. `budgetMs` bounds the whole sequence (default 5000).
 *
 * @since 0.1.0
 * @category models
 */
export interface StopOptions {
  readonly budgetMs?: number | undefined
}

/**
 * What `stopDetached` needs: the recorded process group and marker of a job whose handle is gone.
 *
 * @since 0.1.0
 * @category models
 */
export interface JobRef {
  /** Unknown when the process id was never reported: then the job is found by its marker alone. */
  readonly pgid: number | undefined
  readonly marker: string
}

/**
 * A process whose spawn was requested, as `adopt` takes it over. It was spawned `detached` (it leads its own process
 * group) with `MCP_WORKER_JOB=<marker>` in its environment, and its listeners were attached in the same tick as the
 * spawn, so neither its start nor its exit can be missed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Started {
  /** Undefined when the spawn threw at once; `started` then settles with that error. */
  readonly child: ChildProcess | undefined
  /** Settles with `undefined` once the process runs, or with the spawn error. */
  readonly started: Promise<Error | undefined>
  /** Settles when the root process exits. */
  readonly exited: Promise<ExitInfo>
  /** What was started, and where: a failed spawn names them. */
  readonly command?: string | undefined
  readonly cwd?: string | undefined
}

/**
 * Counts what is left of a job: the live processes that carry its marker or belong to its process group.
 *
 * @since 0.1.0
 * @category cleanup scan
 */
export interface CleanupScanService {
  readonly scan: (marker: string, pgid: number | undefined) => Effect.Effect<ReadonlyArray<number>>
}

export {
  /**
   * The scan that confirms a cleanup: `stop`, `stopDetached` and the host registry count what is left of a job with
   * it (never what to signal). It defaults to the live `scan`, so it never has to be provided; tests replace it with
   * `layerCleanupScanTest`. A job keeps the scan of the context it was started in, and the host registry the one of
   * the context it was built in.
   *
   * @since 0.1.0
   * @category cleanup scan
   */
  CleanupScan
} from "./internal/job/processJob.js"

/**
 * TEST ONLY. The cleanup scan with the given operations in place of the live ones, so a test can report a survivor
 * that cannot be killed (a pid no signal reaches) and make `stop` answer `activeProcesses > 0`.
 *
 * @since 0.1.0
 * @category cleanup scan
 */
export const layerCleanupScanTest: (service: Partial<CleanupScanService>) => Layer.Layer<internal.CleanupScan> =
  internal.layerCleanupScanTest

export {
  /**
   * The server process could not be started (ENOENT, EACCES, a bad cwd…). Nothing was left running. The message
   * names the error code only, never the environment.
   *
   * @since 0.1.0
   * @category errors
   */
  SpawnError
} from "./internal/job/processJob.js"

/**
 * Starts `command` as the root of a new process group, with the marker in its environment, and waits until it
 * really started (or failed with a typed `SpawnError`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn: (options: SpawnOptions) => Effect.Effect<ProcessJob, internal.SpawnError> = internal.spawn

/**
 * Takes over a process already started with the marker (the owner thread starts its server before it has
 * loaded anything else) and waits until it really runs, or fails with a typed `SpawnError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const adopt: (started: Started, marker: string) => Effect.Effect<ProcessJob, internal.SpawnError> =
  internal.adopt

/**
 * Live processes (zombies excluded) that carry `MCP_WORKER_JOB=<marker>` exactly or, when `pgid` is given,
 * belong to that process group. Never includes our own process.
 *
 * @since 0.1.0
 * @category scanning
 */
export const scan: (marker: string, pgid?: number) => Effect.Effect<ReadonlyArray<number>> = internal.scan

/**
 * Ends a job known only by its recorded `{ pgid, marker }` (its owner thread died with the handle): the same
 * signal and confirm sequence as `stop`, without the stdin step.
 *
 * @since 0.1.0
 * @category destructors
 */
export const stopDetached: (ref: JobRef, options?: StopOptions) => Effect.Effect<CleanupSummary> = internal.stopDetached

/**
 * Last resort for a `process.on("exit")` handler, where nothing asynchronous runs: SIGKILL the group, and every
 * process outside it that carries the marker (Linux) or descends from the group (the `ps` path, C100), synchronously,
 * without waiting or confirming. Returns the number of signals sent.
 *
 * @since 0.1.0
 * @category destructors
 */
export const killGroupSync: (pgid: number, marker?: string) => number = internal.killGroupSync
