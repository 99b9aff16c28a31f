import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type { ChildProcess } from "node:child_process"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Predicate } from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as internal from "./scan.js"
import * as Taskkill from "./taskkill.js"

const pollMs = 15

/** C19 @internal */
export const defaultBudgetMs = 5000

/** @internal */
export interface StopContext {
  readonly pgid: number | undefined
  readonly marker: string
  readonly child: ChildProcess | undefined
  readonly exited: Effect.Effect<unknown>
  readonly count: (marker: string, pgid: number | undefined) => Effect.Effect<ReadonlyArray<number>>
  readonly budgetMs: number | undefined
}

interface Stop {
  readonly ctx: StopContext
  readonly budget: number
  readonly deadline: number
  readonly signalled: { term: number; kill: number }
  /** Processes this stop SIGKILLed one by one, by pid: their start time (Linux), to count them until zombies. */
  readonly killed: Map<number, number | undefined>
  escaped: number
  groupKilled: boolean
  /** C100 */
  scanMs: number
}

const nowMs = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos) / 1e6)

const rootRunning = (child: ChildProcess | undefined): boolean =>
  child !== undefined && child.exitCode === null && child.signalCode === null

/** An unreaped root's pid (= pgid) cannot be reused; an unmarked live leader later means it was. */
const groupIsOurs = (found: ReadonlyArray<internal.JobProcess>, ctx: StopContext): boolean =>
  rootRunning(ctx.child) ||
  internal.platform !== "linux" ||
  found.some((p) => p.inGroup && p.marked) ||
  !found.some((p) => p.pid === ctx.pgid)

// Processes usually go within a few ms of a signal or EOF.
const backoff = Schedule.exponential(Duration.millis(1)).pipe(
  Schedule.intersect(Schedule.recurs(4)),
  Schedule.andThen(Schedule.spaced(pollMs))
)

const whilePending = <A>(
  pending: Predicate<A>,
  until: number,
  delays: Schedule.Schedule<unknown>,
  reserveMs: () => number = () => 0
) =>
  Schedule.recurWhile(pending).pipe(
    Schedule.zipLeft(delays),
    Schedule.checkEffect(() => Effect.map(nowMs, (now) => now + reserveMs() < until))
  )

/** No scan starts unless one as long as the last ends by `until`. */
const pollUntil = <A>(stop: Stop, pending: Predicate<A>, until: number): Schedule.Schedule<A, A> => {
  const reserveMs = () => stop.scanMs
  return whilePending(pending, until, backoff, reserveMs).pipe(
    Schedule.modifyDelayEffect((_, delay) =>
      Effect.map(nowMs, (now) => Duration.min(delay, Duration.millis(Math.max(0, until - reserveMs() - now))))
    )
  )
}

const timedScan = <A>(stop: Stop, scan: Effect.Effect<A>): Effect.Effect<A> =>
  Effect.map(Effect.timed(scan), ([duration, value]) => {
    stop.scanMs = Duration.toMillis(duration)
    return value
  })

const isEmpty = (pids: ReadonlyArray<number>): boolean => pids.length === 0
const someLeft = (pids: ReadonlyArray<number>): boolean => pids.length > 0

const countLeft = (ctx: StopContext) => ctx.count(ctx.marker, ctx.pgid)
const scan = (ctx: StopContext) => internal.scanJob(ctx.marker, ctx.pgid)
const nothingLeft = (ctx: StopContext) => Effect.map(countLeft(ctx), isEmpty)
const groupEmpty = (ctx: StopContext) => Effect.map(scan(ctx), (found) => !found.some((p) => p.inGroup))

const waitFor = (stop: Stop, done: Effect.Effect<boolean>, ms: number): Effect.Effect<boolean> =>
  Effect.flatMap(nowMs, (now) =>
    Effect.repeat(
      timedScan(stop, done),
      pollUntil(stop, (held: boolean) => !held, Math.min(stop.deadline, now + ms))
    )
  )

const endStdin = (child: ChildProcess): void => {
  const stdin = child.stdin
  if (stdin !== null && !stdin.destroyed && !stdin.writableEnded) {
    stdin.on("error", () => {}) // EPIPE from a child already gone
    stdin.end()
  }
}

/** While the root runs something is left. */
const stepEof = (stop: Stop): Effect.Effect<boolean> => {
  const { child } = stop.ctx
  if (child === undefined) return nothingLeft(stop.ctx)
  endStdin(child)
  return Effect.flatMap(nowMs, (start) => {
    // C100: the first listing is spent inside the grace.
    const until = Math.min(stop.deadline, stop.deadline - stop.budget + Math.min(200, stop.budget * 0.1))
    // Else, inside a finalizer, the timeout would wait for the exit.
    return stop.ctx.exited.pipe(
      Effect.interruptible,
      Effect.timeoutOption(Math.max(0, until - start)),
      Effect.zipRight(
        Effect.flatMap(nowMs, (now) =>
          rootRunning(child) ? Effect.succeed(false) : waitFor(stop, nothingLeft(stop.ctx), Math.max(0, until - now))
        )
      )
    )
  })
}

/** Escaped processes get no SIGTERM. */
const stepTerm = (stop: Stop): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const { ctx } = stop
    const found = yield* scan(ctx)
    if (
      ctx.pgid !== undefined &&
      found.some((p) => p.inGroup) &&
      groupIsOurs(found, ctx) &&
      internal.signalGroup(ctx.pgid, "SIGTERM")
    ) {
      stop.signalled.term++
      yield* waitFor(stop, groupEmpty(ctx), stop.budget * 0.4)
    }
    return yield* nothingLeft(ctx)
  })

const killRound = (stop: Stop): Effect.Effect<void> =>
  Effect.map(scan(stop.ctx), (found) => {
    const { ctx } = stop
    const signalGroup = found.some((p) => p.inGroup) && groupIsOurs(found, ctx)
    if (signalGroup && ctx.pgid !== undefined && internal.signalGroup(ctx.pgid, "SIGKILL") && !stop.groupKilled) {
      stop.groupKilled = true
      stop.signalled.kill++
    }
    for (const p of found) {
      if (!p.marked || (p.inGroup && signalGroup) || stop.killed.has(p.pid)) continue
      if (internal.signalMarked(p.pid, ctx.marker, "SIGKILL")) {
        stop.killed.set(p.pid, p.startTime)
        stop.signalled.kill++
        if (!p.inGroup) stop.escaped++
      }
    }
  })

/** A killed escapee's marker is gone before the escapee is (the `ps` path remembers its escapees itself). */
const confirmLeft = (stop: Stop): Effect.Effect<ReadonlyArray<number>> =>
  Effect.map(countLeft(stop.ctx), (pids) => {
    const exiting: Array<number> = []
    for (const [pid, startTime] of stop.killed) {
      if (startTime !== undefined && !pids.includes(pid) && internal.stillExiting(pid, startTime)) exiting.push(pid)
    }
    return exiting.length === 0 ? pids : [...pids, ...exiting]
  })

const stepConfirm = (stop: Stop): Effect.Effect<ReadonlyArray<number>> =>
  Effect.flatMap(confirmLeft(stop), (remaining) =>
    timedScan(
      stop,
      Effect.tap(confirmLeft(stop), (pids) => (someLeft(pids) ? killRound(stop) : Effect.void))
    ).pipe(Effect.scheduleFrom(remaining, pollUntil(stop, someLeft, stop.deadline)))
  )

/** @internal */
export const stopSequence = (ctx: StopContext): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    const budget =
      ctx.budgetMs !== undefined && Number.isFinite(ctx.budgetMs) ? Math.max(0, ctx.budgetMs) : defaultBudgetMs
    const start = yield* nowMs
    if (internal.platform === "win32") return yield* stopWindows(ctx, budget, start)
    const stop: Stop = {
      ctx,
      budget,
      deadline: start + budget,
      signalled: { term: 0, kill: 0 },
      killed: new Map(),
      escaped: 0,
      groupKilled: false,
      scanMs: 0
    }

    // C100: lost with its parent.
    if (internal.platform === "posix") yield* scan(ctx)
    const eofGone = yield* stepEof(stop)
    const t1 = yield* nowMs
    const gone = eofGone || (yield* stepTerm(stop))
    const t2 = yield* nowMs
    if (!gone) yield* killRound(stop)
    const t3 = yield* nowMs
    const remaining = gone ? [] : yield* stepConfirm(stop)
    const end = yield* nowMs

    if (isEmpty(remaining) && ctx.child !== undefined) {
      // Even if an untracked holder kept them open.
      ctx.child.stdout?.destroy()
      ctx.child.stderr?.destroy()
    }
    yield* Effect.logDebug("ProcessJob stop").pipe(
      Effect.annotateLogs({
        pgid: ctx.pgid,
        eofMs: Math.round(t1 - start),
        termMs: Math.round(t2 - t1),
        killMs: Math.round(t3 - t2),
        confirmMs: Math.round(end - t3),
        activeProcesses: remaining.length
      })
    )
    return {
      activeProcesses: remaining.length,
      signalled: stop.signalled,
      escaped: stop.escaped,
      durationMs: Math.round(end - start),
      sessionTerminated: null
    }
  })

const stopWindows = (ctx: StopContext, budget: number, start: number): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    ctx.child?.stdin?.on("error", () => {})
    ctx.child?.stdin?.end()
    const report = ctx.pgid === undefined ? undefined : yield* internal.taskkill(ctx.pgid, budget)
    const remaining = yield* Effect.repeat(
      countLeft(ctx),
      whilePending(someLeft, start + budget, Schedule.spaced(pollMs))
    )
    const end = yield* nowMs
    return {
      activeProcesses: remaining.length,
      signalled: { term: 0, kill: report === undefined ? 0 : Taskkill.endedCount(report) },
      escaped: 0,
      durationMs: Math.round(end - start),
      sessionTerminated: null
    }
  })
