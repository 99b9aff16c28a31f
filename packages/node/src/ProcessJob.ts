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
 * - macOS and other POSIX systems without `/proc`: `ps -axo pid=,pgid=,stat=` sees the group only (other
 *   processes' environments are not visible), so escaped descendants are not found. Best effort.
 * - Windows: `taskkill /T /F /PID <pid>` ends the tree Windows knows about; the confirmation only checks the
 *   root process. Best effort.
 *
 * @since 0.1.0
 */
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type { ChildProcess } from "node:child_process"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ProcessStart from "./internal/processStart.js"
import * as internal from "./internal/processScan.js"

/**
 * The environment variable that carries the job marker through the whole process tree.
 *
 * @since 0.1.0
 * @category constants
 */
export const markerVariable: "MCP_WORKER_JOB" = internal.markerVariable

/**
 * The default budget of `stop`, in milliseconds (the close budget of the design, C19).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBudgetMs = 5000

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
 * TEST ONLY. Replaces the scan that counts what is left (never the one that picks what to signal), so a test
 * can report a survivor that cannot be killed and make `stop` answer `activeProcesses > 0`.
 *
 * @since 0.1.0
 * @category testing
 */
export interface TestSeam {
  readonly scan?: ((marker: string, pgid: number | undefined) => Effect.Effect<ReadonlyArray<number>>) | undefined
}

/**
 * The server process could not be started (ENOENT, EACCES, a bad cwd…). Nothing was left running. The message
 * names the error code only, never the environment.
 *
 * @since 0.1.0
 * @category errors
 */
export class SpawnError extends Data.TaggedError("SpawnError")<{
  readonly message: string
  readonly code: string | null
}> {}

/**
 * Starts `command` as the root of a new process group, with the marker in its environment, and waits until it
 * really started (or failed with a typed `SpawnError`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn = (options: SpawnOptions, seam?: TestSeam): Effect.Effect<ProcessJob, SpawnError> =>
  Effect.suspend(() =>
    options.marker.length === 0
      ? Effect.fail(new SpawnError({ message: "the job marker must not be empty", code: null }))
      : adopt(ProcessStart.start(options), options.marker, seam)
  )

/**
 * Takes over a process already started with the marker (the owner thread starts its server before it has
 * loaded anything else) and waits until it really runs, or fails with a typed `SpawnError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const adopt = (
  started: ProcessStart.StartedProcess,
  marker: string,
  seam?: TestSeam
): Effect.Effect<ProcessJob, SpawnError> =>
  Effect.gen(function* () {
    const error = yield* Effect.promise(() => started.started)
    if (error !== undefined || started.child === undefined) return yield* spawnError(error)
    const child = started.child
    const pid = child.pid!
    const count = seam?.scan ?? countScan
    return {
      child,
      pid,
      pgid: pid,
      marker,
      exited: Effect.promise(() => started.exited),
      stop: (stopOptions?: StopOptions) =>
        stopSequence({ pgid: pid, marker, child, count, budgetMs: stopOptions?.budgetMs }).pipe(
          Effect.withSpan("ProcessJob.stop", { attributes: { pid } })
        )
    } satisfies ProcessJob
  }).pipe(Effect.uninterruptible)

/**
 * Live processes (zombies excluded) that carry `MCP_WORKER_JOB=<marker>` exactly or, when `pgid` is given,
 * belong to that process group. Never includes our own process.
 *
 * @since 0.1.0
 * @category scanning
 */
export const scan = (marker: string, pgid?: number): Effect.Effect<ReadonlyArray<number>> =>
  Effect.map(internal.scanJob(marker, pgid), (found) => found.map((p) => p.pid))

/**
 * Ends a job known only by its recorded `{ pgid, marker }` (its owner thread died with the handle): the same
 * signal and confirm sequence as `stop`, without the stdin step.
 *
 * @since 0.1.0
 * @category destructors
 */
export const stopDetached = (ref: JobRef, options?: StopOptions, seam?: TestSeam): Effect.Effect<CleanupSummary> =>
  stopSequence({
    pgid: ref.pgid,
    marker: ref.marker,
    child: undefined,
    count: seam?.scan ?? countScan,
    budgetMs: options?.budgetMs
  }).pipe(Effect.withSpan("ProcessJob.stopDetached", { attributes: { pgid: ref.pgid ?? null } }))

/**
 * Last resort for a `process.on("exit")` handler, where nothing asynchronous runs: SIGKILL the group (and, with
 * a marker on Linux, every process carrying it) synchronously, without waiting or confirming. Returns the
 * number of signals sent.
 *
 * @since 0.1.0
 * @category destructors
 */
export const killGroupSync = (pgid: number, marker?: string): number => {
  if (!internal.isSignallable(pgid)) return 0
  if (internal.platform === "win32") return internal.taskkillSync(pgid) ? 1 : 0
  if (internal.platform !== "linux") return internal.signalGroup(pgid, "SIGKILL") ? 1 : 0
  const found = internal.scanProc(marker ?? "", pgid)
  let sent = 0
  const groupMembers = found.some((p) => p.inGroup)
  const ours = marker === undefined || found.some((p) => p.inGroup && p.marked) || !found.some((p) => p.pid === pgid)
  const groupSignalled = groupMembers && ours && internal.signalGroup(pgid, "SIGKILL")
  if (groupSignalled) sent++
  if (marker !== undefined) {
    for (const p of found) {
      if (p.marked && !(p.inGroup && groupSignalled) && internal.signalMarked(p.pid, marker, "SIGKILL")) sent++
    }
  }
  return sent
}

// internal

const pollMs = 15

const countScan = (marker: string, pgid: number | undefined): Effect.Effect<ReadonlyArray<number>> => scan(marker, pgid)

const spawnError = (error: unknown): SpawnError => {
  const code =
    typeof (error as NodeJS.ErrnoException)?.code === "string" ? (error as NodeJS.ErrnoException).code! : null
  const reason =
    code === "ENOENT"
      ? "the command or the working directory was not found"
      : code === "EACCES"
        ? "permission denied"
        : "the process could not be started"
  return new SpawnError({ message: `spawn failed${code === null ? "" : ` (${code})`}: ${reason}`, code })
}

interface StopContext {
  readonly pgid: number | undefined
  readonly marker: string
  readonly child: ChildProcess | undefined
  readonly count: (marker: string, pgid: number | undefined) => Effect.Effect<ReadonlyArray<number>>
  readonly budgetMs: number | undefined
}

const nowMs = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos) / 1e6)

const rootRunning = (child: ChildProcess | undefined): boolean =>
  child !== undefined && child.exitCode === null && child.signalCode === null

/**
 * May the group number still be signalled? While our root child is unreaped its pid (= pgid) cannot be reused.
 * After that, the group is ours if a member carries the marker, or if no live process leads a group with that
 * number; a live, unmarked leader means the number was recycled by someone else.
 */
const groupIsOurs = (found: ReadonlyArray<internal.JobProcess>, ctx: StopContext): boolean =>
  rootRunning(ctx.child) ||
  internal.platform !== "linux" ||
  found.some((p) => p.inGroup && p.marked) ||
  !found.some((p) => p.pid === ctx.pgid)

const stopSequence = (ctx: StopContext): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    const budget =
      ctx.budgetMs !== undefined && Number.isFinite(ctx.budgetMs) ? Math.max(0, ctx.budgetMs) : defaultBudgetMs
    const start = yield* nowMs
    const deadline = start + budget
    const left = Effect.map(nowMs, (now) => Math.max(0, deadline - now))
    const signalled = { term: 0, kill: 0 }
    const killed = new Set<number>()
    let escaped = 0
    let groupKilled = false

    if (internal.platform === "win32") return yield* stopWindows(ctx, budget, start)

    const countLeft = ctx.count(ctx.marker, ctx.pgid)
    const detailed = internal.scanJob(ctx.marker, ctx.pgid)

    // Polls `done` until it is true or `ms` (capped by the deadline) has passed. Processes usually go within
    // a few ms of a signal or EOF, so the interval starts at 1 ms and doubles up to pollMs.
    const waitUntil = (done: Effect.Effect<boolean>, ms: number): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const until = Math.min(deadline, (yield* nowMs) + ms)
        let interval = 1
        while (true) {
          if (yield* done) return true
          const now = yield* nowMs
          if (now >= until) return false
          yield* Effect.sleep(Math.min(interval, until - now))
          interval = Math.min(pollMs, interval * 2)
        }
      })
    const nothingLeft = Effect.map(countLeft, (pids) => pids.length === 0)
    const groupEmpty = Effect.map(detailed, (found) => !found.some((p) => p.inGroup))

    const killRound = Effect.gen(function* () {
      const found = yield* detailed
      const groupMembers = found.some((p) => p.inGroup)
      const signalGroup = groupMembers && groupIsOurs(found, ctx)
      if (signalGroup && ctx.pgid !== undefined && internal.signalGroup(ctx.pgid, "SIGKILL") && !groupKilled) {
        groupKilled = true
        signalled.kill++
      }
      for (const p of found) {
        if (!p.marked || (p.inGroup && signalGroup) || killed.has(p.pid)) continue
        if (internal.signalMarked(p.pid, ctx.marker, "SIGKILL")) {
          killed.add(p.pid)
          signalled.kill++
          if (!p.inGroup) escaped++
        }
      }
    })

    // (1) polite: end stdin and give the tree a short grace to go by itself.
    const t0 = yield* nowMs
    let gone = false
    if (ctx.child !== undefined) {
      const stdin = ctx.child.stdin
      if (stdin !== null && !stdin.destroyed && !stdin.writableEnded) {
        stdin.on("error", () => {}) // EPIPE from a child that is already gone is expected here
        stdin.end()
      }
      gone = yield* waitUntil(nothingLeft, Math.min(200, budget * 0.1))
    } else {
      gone = yield* nothingLeft
    }

    // (2) SIGTERM the group, wait for the group to empty (escaped processes get no SIGTERM, so they are not
    // waited for here).
    const t1 = yield* nowMs
    if (!gone) {
      const found = yield* detailed
      if (
        ctx.pgid !== undefined &&
        found.some((p) => p.inGroup) &&
        groupIsOurs(found, ctx) &&
        internal.signalGroup(ctx.pgid, "SIGTERM")
      ) {
        signalled.term++
        yield* waitUntil(groupEmpty, budget * 0.4)
      }
      gone = yield* nothingLeft
    }

    // (3) SIGKILL the group and every process that still carries the marker.
    const t2 = yield* nowMs
    if (!gone) yield* killRound

    // (4) confirm: re-scan until nothing is left or the budget ends; kill anything that appeared meanwhile.
    const t3 = yield* nowMs
    let remaining: ReadonlyArray<number> = gone ? [] : yield* countLeft
    let interval = 1
    while (remaining.length > 0 && (yield* left) > 0) {
      yield* Effect.sleep(Math.min(interval, yield* left))
      interval = Math.min(pollMs, interval * 2)
      remaining = yield* countLeft
      if (remaining.length > 0) yield* killRound
    }
    const end = yield* nowMs

    if (remaining.length === 0 && ctx.child !== undefined) {
      // Nothing can write any more: release the read ends even if an untracked holder kept them open.
      ctx.child.stdout?.destroy()
      ctx.child.stderr?.destroy()
    }
    yield* Effect.logDebug("ProcessJob stop").pipe(
      Effect.annotateLogs({
        pgid: ctx.pgid,
        eofMs: Math.round(t1 - t0),
        termMs: Math.round(t2 - t1),
        killMs: Math.round(t3 - t2),
        confirmMs: Math.round(end - t3),
        activeProcesses: remaining.length
      })
    )
    return {
      activeProcesses: remaining.length,
      signalled,
      escaped,
      durationMs: Math.round(end - start),
      sessionTerminated: null
    }
  })

// Best effort: taskkill the tree, then wait for the root within the budget.
const stopWindows = (ctx: StopContext, budget: number, start: number): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    ctx.child?.stdin?.on("error", () => {})
    ctx.child?.stdin?.end()
    const killed = ctx.pgid === undefined ? false : yield* internal.taskkill(ctx.pgid, budget)
    let remaining = yield* ctx.count(ctx.marker, ctx.pgid)
    while (remaining.length > 0 && (yield* nowMs) - start < budget) {
      yield* Effect.sleep(pollMs)
      remaining = yield* ctx.count(ctx.marker, ctx.pgid)
    }
    const end = yield* nowMs
    return {
      activeProcesses: remaining.length,
      signalled: { term: 0, kill: killed ? 1 : 0 },
      escaped: 0,
      durationMs: Math.round(end - start),
      sessionTerminated: null
    }
  })
