// The process job's behaviour on real process trees, one suite for every path that can run here: `ProcessJob.test.ts`
// runs it on the Linux path (/proc), `ProcessPaths.test.ts` on the `ps` path macOS takes, forced with
// `MCPW_PROCESS_SCAN=posix` (C100). `sh` and coreutils stand in for stdio MCP servers; what a test checks it reads from
// /proc itself, independent of the path under test.
import { assert, describe, it } from "@effect/vitest"
import * as ProcessJob from "@mcp-worker/node/ProcessJob"
import * as NodeChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type Platform, platform } from "../../packages/node/src/internal/job/platform.js"

export const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" }

export const newMarker = (): string => `test-${Crypto.randomUUID()}`

// Our own view of /proc, independent of the module under test.
export const statOf = (pid: number): { state: string; ppid: number; pgid: number } | undefined => {
  try {
    const text = Fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const fields = text
      .slice(text.lastIndexOf(")") + 2)
      .trim()
      .split(" ")
    return { state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]) }
  } catch {
    return undefined
  }
}

export const isLive = (pid: number): boolean => {
  const stat = statOf(pid)
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X"
}

const commOf = (pid: number): string => {
  try {
    return Fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim()
  } catch {
    return ""
  }
}

// Bit 15 (SIGTERM) of the ignored-signals mask in /proc/<pid>/status.
const ignoresTerm = (pid: number): boolean => {
  const line = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("SigIgn:"))
  return line !== undefined && (BigInt(`0x${line.slice(7).trim()}`) & (1n << 14n)) !== 0n
}

// Polls until `check` holds; fails the test after `ms`. Process start-up has no event to wait for.
export const eventually = <A>(check: Effect.Effect<A | undefined>, ms = 5000): Effect.Effect<A> =>
  Effect.gen(function* () {
    const until = Date.now() + ms
    while (true) {
      const value = yield* check
      if (value !== undefined) return value
      if (Date.now() > until) return yield* Effect.dieMessage("condition not reached in time")
      yield* Effect.sleep(10)
    }
  })

export const release = (job: ProcessJob.ProcessJob) =>
  Effect.gen(function* () {
    yield* job.stop({ budgetMs: 2000 })
    job.child.stdin?.destroy()
    job.child.stdout?.destroy()
    job.child.stderr?.destroy()
    yield* job.exited
  })

// A job that is always stopped and whose pipes are always released when the test's scope closes.
export const start = (
  script: string,
  marker = newMarker()
): Effect.Effect<ProcessJob.ProcessJob, ProcessJob.SpawnError, Scope.Scope> =>
  Effect.acquireRelease(ProcessJob.spawn({ command: "sh", args: ["-c", script], env, marker }), release)

// Waits until the job has `n` live processes that are not `sh` any more (the shell forks before it execs).
export const settled = (job: ProcessJob.ProcessJob, n: number, comm = "sleep") =>
  eventually(
    Effect.map(ProcessJob.scan(job.marker, job.pgid), (pids) => {
      const others = pids.filter((pid) => pid !== job.pid)
      return others.length === n && others.every((pid) => commOf(pid) === comm) ? pids : undefined
    })
  )

const elapsed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const t = performance.now()
    const value = yield* self
    return [value, performance.now() - t] as const
  })

/** Registers the suite for `path`, which must be the path this process takes. */
export const processJobSuite = (path: Exclude<Platform, "win32">) =>
  describe(`ProcessJob (${path} path)`, () => {
    it("takes the path the suite is run for", () => {
      assert.strictEqual(platform, path)
    })

    it.scopedLive("ends grandchildren in the group: SIGTERM, nothing left", () =>
      Effect.gen(function* () {
        const job = yield* start("sleep 300 & sleep 300 & wait")
        assert.strictEqual(job.pgid, job.pid)
        const pids = yield* settled(job, 2)
        assert.strictEqual(pids.length, 3)
        for (const pid of pids) assert.strictEqual(statOf(pid)?.pgid, job.pgid)

        const summary = yield* job.stop()
        assert.strictEqual(summary.activeProcesses, 0)
        assert.deepStrictEqual(summary.signalled, { term: 1, kill: 0 })
        // Ended once the group is gone: after EOF's grace (200 ms), not after SIGTERM's (2 s of the default budget).
        assert.isBelow(summary.durationMs, 1500)
        assert.strictEqual(summary.escaped, 0)
        assert.strictEqual(summary.sessionTerminated, null)
        for (const pid of pids) assert.isFalse(isLive(pid), `pid ${pid} still alive`)
        const exit = yield* job.exited
        assert.strictEqual(exit.signal, "SIGTERM")
      })
    )

    it.scopedLive(
      "finds a setsid-escaped grandchild (by marker, or by descent on the ps path), kills it and counts it as escaped",
      () =>
        Effect.gen(function* () {
          const job = yield* start("setsid sleep 300 & sleep 300 & wait")
          const pids = yield* settled(job, 2)
          const escapee = pids.find((pid) => statOf(pid)?.pgid !== job.pgid)
          assert.isDefined(escapee, "the setsid child left the group")

          const summary = yield* job.stop()
          assert.strictEqual(summary.activeProcesses, 0)
          assert.strictEqual(summary.escaped, 1)
          assert.strictEqual(summary.signalled.term, 1)
          assert.strictEqual(summary.signalled.kill, 1)
          // SIGKILL was sent and counted; the kernel tears the escapee down, and init reaps it, a moment later.
          yield* eventually(Effect.sync(() => (pids.some(isLive) ? undefined : true)))
        })
    )

    it.scopedLive("a SIGTERM-ignoring tree goes the SIGKILL path, within the budget", () =>
      Effect.gen(function* () {
        const job = yield* start("trap '' TERM; sleep 300 & sleep 300 & wait")
        const pids = yield* settled(job, 2)
        // `trap '' TERM` is inherited as "ignored" by the sleeps: SIGTERM can end nothing here.
        for (const pid of pids) assert.isTrue(ignoresTerm(pid), `pid ${pid} does not ignore SIGTERM`)

        const budgetMs = 1000
        const [summary, ms] = yield* elapsed(job.stop({ budgetMs }))
        assert.strictEqual(summary.activeProcesses, 0)
        assert.strictEqual(summary.signalled.term, 1)
        assert.isAbove(summary.signalled.kill, 0)
        assert.strictEqual(summary.escaped, 0)
        assert.isAtMost(summary.durationMs, budgetMs + 100)
        assert.isAtMost(ms, budgetMs + 100)
        // stdin grace (100 ms) + SIGTERM wait (400 ms) must have been spent before the kill
        assert.isAtLeast(summary.durationMs, 450)
        for (const pid of pids) assert.isFalse(isLive(pid))
        assert.strictEqual((yield* job.exited).signal, "SIGKILL")
      })
    )

    it.scopedLive("a tree that ends on stdin EOF is done at step 1, without any signal", () =>
      Effect.gen(function* () {
        const job = yield* start("cat | cat")
        const pids = yield* settled(job, 2, "cat")
        const [summary, ms] = yield* elapsed(job.stop())
        assert.strictEqual(summary.activeProcesses, 0)
        // No signal was sent: the tree was gone within step 1's grace. The time only rules out a wait for a whole budget
        // (a loaded machine took 285 ms to confirm what a quiet one confirms in under 200).
        assert.deepStrictEqual(summary.signalled, { term: 0, kill: 0 })
        assert.isBelow(ms, 1000)
        for (const pid of pids) assert.isFalse(isLive(pid))
        assert.deepStrictEqual(yield* job.exited, { code: 0, signal: null })
      })
    )

    it.scopedLive("stopping one job leaves every process of another job alive", () =>
      Effect.gen(function* () {
        const a = yield* start("setsid sleep 300 & sleep 300 & wait")
        const b = yield* start("setsid sleep 300 & sleep 300 & wait")
        const pidsA = yield* settled(a, 2)
        const pidsB = yield* settled(b, 2)

        const summaryA = yield* a.stop()
        assert.strictEqual(summaryA.activeProcesses, 0)
        for (const pid of pidsA) assert.isFalse(isLive(pid))
        for (const pid of pidsB) assert.isTrue(isLive(pid), `pid ${pid} of the other job was touched`)

        const summaryB = yield* b.stop()
        assert.strictEqual(summaryB.activeProcesses, 0)
        for (const pid of pidsB) assert.isFalse(isLive(pid))
      })
    )

    it.scopedLive("a zombie of the tree is not a live process", () =>
      Effect.gen(function* () {
        // The shell forks `sleep 0`, then becomes `sleep 300`, which never reaps that child: a zombie.
        const job = yield* start("sleep 0 & exec sleep 300")
        const zombie = yield* eventually(
          Effect.sync(() => {
            for (const entry of Fs.readdirSync("/proc")) {
              const stat = /^\d+$/.test(entry) ? statOf(Number(entry)) : undefined
              if (stat?.state === "Z" && stat.ppid === job.pid) return Number(entry)
            }
            return undefined
          })
        )
        assert.strictEqual(statOf(zombie)?.pgid, job.pgid)
        assert.deepStrictEqual(yield* ProcessJob.scan(job.marker, job.pgid), [job.pid])

        const summary = yield* job.stop()
        assert.strictEqual(summary.activeProcesses, 0)
        assert.isFalse(isLive(job.pid))
      })
    )

    it.scopedLive(
      "cleanup scan layer: an unkillable survivor gives activeProcesses > 0, a second stop confirms 0",
      () =>
        Effect.gen(function* () {
          // The "survivor" is a real unrelated process (own group, no marker): it must never be signalled.
          const bystander = yield* Effect.acquireRelease(
            Effect.sync(() => NodeChildProcess.spawn("sleep", ["300"], { detached: true, stdio: "ignore", env })),
            (child) =>
              Effect.async<void>((resume) => {
                if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
                child.once("exit", () => resume(Effect.void))
                child.kill("SIGKILL")
              })
          )
          let survivorScans = Number.POSITIVE_INFINITY
          const survivor = ProcessJob.layerCleanupScanTest({
            scan: (marker, pgid) =>
              Effect.map(ProcessJob.scan(marker, pgid), (pids) =>
                survivorScans-- > 0 ? [...pids, bystander.pid!] : pids
              )
          })
          // The job keeps the scan it was started with: both stops below, and the release, count with it.
          const job = yield* start("sleep 300 & sleep 300 & wait").pipe(Effect.provide(survivor))
          const pids = yield* settled(job, 2)

          const first = yield* job.stop({ budgetMs: 500 })
          assert.strictEqual(first.activeProcesses, 1)
          assert.isAtMost(first.durationMs, 600)
          for (const pid of pids) assert.isFalse(isLive(pid))
          assert.isTrue(isLive(bystander.pid!), "the bystander was signalled")

          survivorScans = 2
          const second = yield* job.stop({ budgetMs: 500 })
          assert.strictEqual(second.activeProcesses, 0)
          assert.isTrue(isLive(bystander.pid!))
        })
    )

    it.scopedLive("adopt takes over a process the caller started, described as a ProcessJob.Started", () =>
      Effect.gen(function* () {
        const marker = newMarker()
        const child = NodeChildProcess.spawn("sh", ["-c", "sleep 300 & wait"], {
          detached: true,
          stdio: ["pipe", "pipe", "pipe"],
          env: { ...env, [ProcessJob.markerVariable]: marker }
        })
        // Listeners in the same tick as the spawn, so neither the start nor the exit can be missed.
        const started: ProcessJob.Started = {
          child,
          started: new Promise((resolve) => {
            child.once("spawn", () => resolve(undefined))
            child.once("error", resolve)
          }),
          exited: new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
        }
        const job = yield* Effect.acquireRelease(ProcessJob.adopt(started, marker), release)
        assert.strictEqual(job.pid, child.pid)
        const pids = yield* settled(job, 1)
        const summary = yield* job.stop({ budgetMs: 2000 })
        assert.strictEqual(summary.activeProcesses, 0)
        for (const pid of pids) assert.isFalse(isLive(pid))
      })
    )

    it.scopedLive("stopDetached ends a tree known only by { pgid, marker }", () =>
      Effect.gen(function* () {
        const job = yield* start("setsid sleep 300 & sleep 300 & wait")
        const pids = yield* settled(job, 2)
        const summary = yield* ProcessJob.stopDetached({ pgid: job.pgid, marker: job.marker })
        assert.strictEqual(summary.activeProcesses, 0)
        assert.strictEqual(summary.signalled.term, 1)
        assert.strictEqual(summary.escaped, 1)
        for (const pid of pids) assert.isFalse(isLive(pid))
        assert.strictEqual((yield* job.exited).signal, "SIGTERM")
      })
    )

    it.scopedLive("stopDetached of a job that is already gone confirms 0 without signalling", () =>
      Effect.gen(function* () {
        const job = yield* start("exit 0")
        yield* job.exited
        const summary = yield* ProcessJob.stopDetached({ pgid: job.pgid, marker: job.marker })
        assert.strictEqual(summary.activeProcesses, 0)
        assert.deepStrictEqual(summary.signalled, { term: 0, kill: 0 })
      })
    )

    it.scopedLive("killGroupSync (exit-handler last resort) SIGKILLs the group and the marked escapee at once", () =>
      Effect.gen(function* () {
        const job = yield* start("setsid sleep 300 & sleep 300 & wait")
        const pids = yield* settled(job, 2)
        assert.strictEqual(ProcessJob.killGroupSync(job.pgid, job.marker), 2)
        assert.strictEqual((yield* job.exited).signal, "SIGKILL")
        yield* eventually(
          Effect.map(ProcessJob.scan(job.marker, job.pgid), (left) => (left.length === 0 ? true : undefined))
        )
        for (const pid of pids) assert.isFalse(isLive(pid))
        assert.strictEqual(ProcessJob.killGroupSync(job.pgid, job.marker), 0)
        for (const id of [0, 1, -1, process.pid]) assert.strictEqual(ProcessJob.killGroupSync(id), 0)
      })
    )

    it.scopedLive("20 jobs with 2 grandchildren each, stopped concurrently within one 5 s budget", () =>
      Effect.gen(function* () {
        const jobs = yield* Effect.forEach(Array.from({ length: 20 }), () => start("sleep 300 & sleep 300 & wait"), {
          concurrency: "unbounded"
        })
        const pids = (yield* Effect.forEach(jobs, (job) => settled(job, 2))).flat()
        assert.strictEqual(pids.length, 60)

        const [summaries, ms] = yield* elapsed(
          Effect.forEach(jobs, (job) => job.stop({ budgetMs: 5000 }), { concurrency: "unbounded" })
        )
        assert.isBelow(ms, 5000)
        for (const summary of summaries) assert.strictEqual(summary.activeProcesses, 0)
        for (const pid of pids) assert.isFalse(isLive(pid))
      })
    )
  })
