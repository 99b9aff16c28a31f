// The host-level process-tree cases that each process path must pass (C19, C20, C27, C100): a grandchild in the
// server's group, a setsid escapee, an owner thread ended from outside, and the host process ending without its
// finalizers (process.exit) or without any JavaScript (SIGKILL). ProcessTree.test.ts runs them on the Linux path,
// ProcessPaths.test.ts on the `ps` path. What a case checks it reads from /proc itself.
import { assert, it } from "@effect/vitest"
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Platform } from "../../packages/node/src/internal/job/platform.js"
import { statefulConfig } from "../fixtures/servers.js"
import {
  eventually,
  hostProgram as startedHost,
  isAlive,
  ownerThread,
  processesWithEnv,
  startedThreads,
  structured,
  tag,
  withHost
} from "./helpers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** The process group of a live process, from `/proc/<pid>/stat`. */
export const pgidOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return Number(
    stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .at(2)
  )
}

export const sorted = (pids: ReadonlyArray<number>) => [...pids].sort((a, b) => a - b)

/** Measures an effect's wall time. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ wallMs: Math.round(Duration.toMillis(duration)), value }))

/** One log line per scenario with the measured close times, so a test run reports them. */
export const report = (scenario: string, wallMs: number, cleanup: CleanupSummary | null | undefined) =>
  Effect.logInfo(`close timing: ${scenario}`).pipe(
    Effect.annotateLogs({
      wallMs,
      durationMs: cleanup?.durationMs ?? null,
      term: cleanup?.signalled.term ?? null,
      kill: cleanup?.signalled.kill ?? null,
      escaped: cleanup?.escaped ?? null
    })
  )

// The host process itself ending: a real Node program (test/fixtures/host-program.ts) with the host layer.

export interface HostProgram {
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly ready: Promise<void>
  readonly output: () => string
  /** The pids of the server tree, as the program printed them. */
  readonly tree: () => Array<number>
  readonly signal: (signal: NodeJS.Signals) => void
}

/** Runs the host program in `mode`; released by SIGKILL (and a sweep of its tag) only if a test failed. */
export const hostProgram = (mode: "wait" | "exit", t: string, flags: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.sync((): HostProgram => {
      const child = spawn(
        process.execPath,
        [...flags, "--import", "tsx", path.join(root, "test/fixtures/host-program.ts"), mode, t],
        {
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let stdout = ""
      let stderr = ""
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal }))
      )
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding("utf8")
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes(`READY ${t}\n`)) resolve()
        })
        void exited.then(({ code, signal }) =>
          reject(new Error(`the host program exited (${code}, ${signal}) before READY:\n${stdout}\n${stderr}`))
        )
      })
      ready.catch(() => {})
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk
      })
      const tree = () => (/^TREE ([\d ]+)$/m.exec(stdout)?.[1] ?? "").split(" ").filter(Boolean).map(Number)
      return { exited, ready, output: () => stdout, tree, signal: (signal) => child.kill(signal) }
    }),
    (program) =>
      Effect.promise(async () => {
        program.signal("SIGKILL")
        await program.exited
        for (const pid of processesWithEnv("TEST_TAG", t)) process.kill(pid, "SIGKILL")
      })
  )

/** Pids whose command line holds every one of `parts` (NUL-separated arguments joined by spaces). */
const processesWithArgs = (...parts: Array<string>): Array<number> =>
  fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && isAlive(Number(entry)))
    .filter((entry) => {
      try {
        const args = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
        return parts.every((part) => args.includes(part))
      } catch {
        return false
      }
    })
    .map(Number)

const parentOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return undefined
  }
}

/**
 * The processes of `pids` whose parent is not one of them: a shell's subshell (the `ps` reaper's `$(ps …)`) is a
 * fork with its parent's command line, for as long as it runs.
 */
export const topmost = (pids: ReadonlyArray<number>): Array<number> =>
  pids.filter((pid) => !pids.includes(parentOf(pid)!))

/** `[utime + stime]` clock ticks and resident KiB of a process, from /proc. */
const usage = (pid: number): { ticks: number; rssKiB: number } => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
  return { ticks: Number(fields[11]) + Number(fields[12]), rssKiB: Number(rss?.[1] ?? 0) }
}

/** Registers the cases of a worker's tree closed through the host. */
export const hostCloseCases = () => {
  it.live("a grandchild in the server's group is gone after close", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
        const server = (yield* workers.status(id)).pid!
        const grandchild = structured(yield* workers.callTool(id, "spawn", {})).pid as number
        assert.strictEqual(pgidOf(grandchild), server, "the grandchild is in the server's group")
        assert.deepStrictEqual(sorted(processesWithEnv("TEST_TAG", t)), sorted([server, grandchild]))

        const { value: closed, wallMs } = yield* timed(workers.close(id))
        assert.strictEqual(closed.state, "closed")
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.strictEqual(closed.cleanup?.escaped, 0)
        assert.isFalse(isAlive(grandchild))
        assert.isFalse(isAlive(server))
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.strictEqual((yield* Effect.flip(workers.status(id)))._tag, "UnknownWorker")
        yield* report("grandchild in group", wallMs, closed.cleanup)
      })
    )
  )

  it.live(
    "a grandchild that called setsid is found (by marker, or by descent on the ps path) and gone after close",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const t = tag()
          const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
          const server = (yield* workers.status(id)).pid!
          const escapee = structured(yield* workers.callTool(id, "spawn", { setsid: true })).pid as number
          assert.strictEqual(pgidOf(escapee), escapee, "the escapee leads its own group, outside the server's")
          assert.notStrictEqual(pgidOf(escapee), server)

          const { value: closed, wallMs } = yield* timed(workers.close(id))
          assert.strictEqual(closed.cleanup?.activeProcesses, 0)
          assert.isAtLeast(closed.cleanup?.escaped ?? 0, 1)
          assert.isAtLeast(closed.cleanup?.signalled.kill ?? 0, 1)
          assert.isFalse(isAlive(escapee))
          assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
          yield* report("setsid escapee", wallMs, closed.cleanup)
        })
      )
  )

  it.scopedLive("C20: an owner thread terminated from outside: the host ends its tree, setsid escapee included", () =>
    Effect.gen(function* () {
      const threads = yield* startedThreads
      yield* withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const t = tag()
          const id = yield* workers.open({ ...statefulConfig("--spawn-at-start", "2"), env: { TEST_TAG: t } })
          const escapee = structured(yield* workers.callTool(id, "spawn", { setsid: true })).pid as number
          const tree = processesWithEnv("TEST_TAG", t)
          assert.strictEqual(tree.length, 4)
          assert.include(tree, escapee)

          const thread = yield* ownerThread(threads, (yield* workers.status(id)).threadId)
          const started = Date.now()
          yield* Effect.promise(() => thread.terminate())
          assert.isTrue(yield* Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", t).length === 0)))
          const endedMs = Date.now() - started
          assert.isFalse(isAlive(escapee))
          assert.isTrue(
            yield* Effect.promise(() => eventually(() => Effect.runSync(workers.status(id)).cleanup !== null))
          )
          const status = yield* workers.status(id)
          assert.strictEqual(status.state, "failed")
          assert.strictEqual(status.lastFailure?.kind, "thread")
          assert.strictEqual(status.cleanup?.activeProcesses, 0)
          assert.isAtLeast(status.cleanup?.escaped ?? 0, 1)
          yield* report("owner thread terminated (host-side stopDetached)", endedMs, status.cleanup)

          const closed = yield* workers.close(id)
          assert.strictEqual(closed.cleanup?.activeProcesses, 0)
          assert.strictEqual((yield* Effect.flip(workers.status(id)))._tag, "UnknownWorker")
        })
      )
    })
  )
}

/** Registers the cases of the host process ending without its finalizers, or without any JavaScript. */
export const hostDeathCases = (path: Exclude<Platform, "win32">) => {
  it.scopedLive(
    "process.exit(0) without finalizers: the exit hook SIGKILLs the group and the marked escapee",
    () =>
      Effect.gen(function* () {
        const t = tag()
        // V8 flags and a loader on the host, which a worker thread refuses in an explicit list: opens must work.
        const program = yield* hostProgram("exit", t, ["--expose-gc", "--max-old-space-size=512"])
        // A bound on a host program's whole life (its start, an owner thread, a server with three descendants), not a
        // measure of it: on a busy machine that life alone has taken more than 10 s.
        const exit = yield* Effect.promise(() => program.exited).pipe(Effect.timeout("45 seconds"))
        yield* Effect.promise(() => program.ready)
        assert.deepStrictEqual(exit, { code: 0, signal: null })
        const tree = program.tree()
        assert.strictEqual(tree.length, 4, "server, 2 grandchildren, 1 setsid escapee")
        // No finalizer ran: the only thing that could end the tree is the process.on("exit") hook.
        assert.notInclude(program.output(), "worker closed")
        // SIGKILL was sent synchronously; the kernel finishes delivering it, and tearing each process down, a moment
        // later (a dying process stops showing its environment before it is gone).
        const gone = () => processesWithEnv("TEST_TAG", t).length === 0 && !tree.some(isAlive)
        assert.isTrue(yield* Effect.promise(() => eventually(gone, 10_000)))
      }),
    { timeout: 60_000 }
  )

  it.scopedLive("C27: a SIGKILLed host leaves no server process within 2 s", () =>
    Effect.gen(function* () {
      const testTag = tag()
      // Not ours: a process carrying another job's marker must survive the reaper.
      const decoy = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn("sleep", ["60"], {
            stdio: "ignore",
            env: { ...process.env, MCP_WORKER_JOB: `decoy${testTag}`, TEST_TAG: `decoy-${testTag}` }
          })
        ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      const { host, stdout } = yield* startedHost("three", testTag)
      const tree = /^TREE ([\d ]+)$/m.exec(stdout)![1]!.split(" ").map(Number)
      // Three servers, one grandchild in a group, one that left it with setsid.
      assert.strictEqual(tree.length, 5)
      assert.isTrue(tree.every(isAlive))
      const reapers = topmost(processesWithArgs("mcp-worker-reaper", String(host.pid)))
      assert.strictEqual(reapers.length, 1, "one reaper per host")
      const reaper = reapers[0]!
      // The reaper of the path under test: the ps variant lists processes, the /proc one reads their environments.
      const script = fs.readFileSync(`/proc/${reaper}/cmdline`, "utf8").split("\0")[2] ?? ""
      assert.strictEqual(script.includes("/proc/"), path === "linux")
      assert.strictEqual(script.includes(" lstart="), path === "posix")
      // Idle, it costs next to nothing: a few MiB at most and no CPU.
      const before = usage(reaper)
      yield* Effect.sleep("500 millis")
      const after = usage(reaper)
      assert.isAtMost(after.rssKiB, 8 * 1024)
      assert.strictEqual(after.ticks, before.ticks)

      host.kill("SIGKILL")
      const killed = Date.now()
      const gone = yield* Effect.promise(() => eventually(() => !tree.some(isAlive), 2_000))
      const tookMs = Date.now() - killed
      assert.isTrue(gone, `server processes still alive ${tookMs} ms after the host was SIGKILLed`)
      assert.isAtMost(tookMs, 2_000)
      // The reaper exits by itself once its work is done, and touched nothing that was not ours.
      assert.isTrue(yield* Effect.promise(() => eventually(() => !isAlive(reaper), 2_000)), "the reaper is left")
      assert.isTrue(isAlive(decoy.pid!), "a process outside the host's trees was killed")
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", testTag), [])
    })
  )
}
