/**
 * The stop sequence of a process job: end stdin, SIGTERM the group, SIGKILL the group and every marked
 * process, then re-scan until nothing is left or the budget ends.
 */
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type { ChildProcess } from "node:child_process"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as internal from "./processScan.js"

const pollMs = 15

/** The default budget of a stop, in milliseconds (the default budget of `close`, C19). @internal */
export const defaultBudgetMs = 5000

/** What a stop needs to know about its job. @internal */
export interface StopContext {
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

/** Runs the stop sequence within the budget and says what is left. @internal */
export const stopSequence = (ctx: StopContext): Effect.Effect<CleanupSummary> =>
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
