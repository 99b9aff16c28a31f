// End-to-end process-tree cleanup (C19–C21 and the platform notes of docs/contract.md): real host registry, real
// owner threads, real fixture server processes with grandchildren. ProcessJob.test.ts covers the job module alone;
// this file checks that the host and the owner use it so that every path — close, CloseFailed and retry, a dead
// owner thread, the layer's finalizer and the host process's own exit — leaves no process of the worker's tree,
// and only of it.
import { assert, describe, it } from "@effect/vitest"
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ProcessJob from "../../packages/node/src/ProcessJob.js"
import { statefulConfig } from "../fixtures/servers.js"
import {
  activePorts,
  eventually,
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
const pgidOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return Number(
    stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .at(2)
  )
}

const sorted = (pids: ReadonlyArray<number>) => [...pids].sort((a, b) => a - b)

/** Measures an effect's wall time. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ wallMs: Math.round(Duration.toMillis(duration)), value }))

/** One log line per scenario with the measured close times, so a test run reports them. */
const report = (scenario: string, wallMs: number, cleanup: CleanupSummary | null | undefined) =>
  Effect.logInfo(`close timing: ${scenario}`).pipe(
    Effect.annotateLogs({
      wallMs,
      durationMs: cleanup?.durationMs ?? null,
      term: cleanup?.signalled.term ?? null,
      kill: cleanup?.signalled.kill ?? null,
      escaped: cleanup?.escaped ?? null
    })
  )

describe("process tree (stdio) through the host", () => {
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

  it.live("a grandchild that called setsid is found by its marker and gone after close", () =>
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

  it.live("a server ignoring SIGTERM is SIGKILLed, and close stays within its 2 s budget", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({
          ...statefulConfig("--ignore-sigterm", "--spawn-at-start", "1"),
          env: { TEST_TAG: t }
        })
        assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 2)

        const { value: closed, wallMs } = yield* timed(workers.close(id, { timeout: "2 seconds" }))
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.isAbove(closed.cleanup?.signalled.term ?? 0, 0, "SIGTERM was tried first")
        assert.isAbove(closed.cleanup?.signalled.kill ?? 0, 0, "then SIGKILL")
        assert.isBelow(wallMs, 2000)
        assert.isBelow(closed.cleanup?.durationMs ?? Infinity, 2000)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        yield* report("ignores SIGTERM (2 s budget)", wallMs, closed.cleanup)
      })
    )
  )

  it.live("a server ignoring stdin EOF (the SDK default) ends on SIGTERM, without SIGKILL", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
        const server = (yield* workers.status(id)).pid!

        const { value: closed, wallMs } = yield* timed(workers.close(id))
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.isAbove(closed.cleanup?.signalled.term ?? 0, 0)
        assert.strictEqual(closed.cleanup?.signalled.kill, 0)
        assert.isFalse(isAlive(server))
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        yield* report("ignores stdin EOF", wallMs, closed.cleanup)
      })
    )
  )

  it.live("a server that exits on stdin EOF needs no signal at all", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig("--exit-on-stdin-eof"), env: { TEST_TAG: t } })
        const server = (yield* workers.status(id)).pid!

        const { value: closed, wallMs } = yield* timed(workers.close(id))
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.deepStrictEqual(closed.cleanup?.signalled, { term: 0, kill: 0 })
        assert.isFalse(isAlive(server))
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        yield* report("exits on stdin EOF", wallMs, closed.cleanup)
      })
    )
  )

  it.live("C19: closing one worker leaves every process of another running and usable", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const [ta, tb] = [tag(), tag()]
        const config = statefulConfig("--spawn-at-start", "2")
        const [a, b] = yield* Effect.all(
          [workers.open({ ...config, env: { TEST_TAG: ta } }), workers.open({ ...config, env: { TEST_TAG: tb } })],
          { concurrency: "unbounded" }
        )
        yield* workers.callTool(a, "spawn", { setsid: true })
        yield* workers.callTool(b, "spawn", { setsid: true })
        const treeB = sorted(processesWithEnv("TEST_TAG", tb))
        assert.strictEqual(processesWithEnv("TEST_TAG", ta).length, 4)
        assert.strictEqual(treeB.length, 4)
        const countBefore = structured(yield* workers.callTool(b, "inc")).count as number

        const closedA = yield* workers.close(a)
        assert.strictEqual(closedA.cleanup?.activeProcesses, 0)
        assert.isAtLeast(closedA.cleanup?.escaped ?? 0, 1)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", ta), [])
        // Not one of B's processes was touched, and B's connection (with its state) still works.
        assert.deepStrictEqual(sorted(processesWithEnv("TEST_TAG", tb)), treeB)
        assert.isTrue(treeB.every(isAlive))
        const statusB = yield* workers.status(b)
        assert.strictEqual(statusB.state, "ready")
        assert.strictEqual(structured(yield* workers.callTool(b, "inc")).count, countBefore + 1)
        const infoB = structured(yield* workers.callTool(b, "info"))
        assert.strictEqual(infoB.pid, statusB.pid)
        assert.strictEqual((infoB.spawned as Array<number>).length, 3)

        const closedB = yield* workers.close(b)
        assert.strictEqual(closedB.cleanup?.activeProcesses, 0)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", tb), [])
      })
    )
  )

  it.live("C20: cleanup that cannot be confirmed is CloseFailed; the id is kept and a second close succeeds", () => {
    let claimSurvivor = false
    let scans = 0
    // The real re-scan runs (the tree really ends), but while armed it also counts this process, which no stop signals:
    // an unkillable survivor.
    const survivor = ProcessJob.layerCleanupScanTest({
      scan: (marker, pgid) =>
        Effect.map(ProcessJob.scan(marker, pgid), (pids) => {
          scans++
          return claimSurvivor ? [...pids, process.pid] : pids
        })
    })
    return Effect.provide(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig("--spawn-at-start", "2"), env: { TEST_TAG: t } })
        assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 3)

        claimSurvivor = true
        // A survivor is waited for until the budget is spent: a short one keeps the test short.
        const error = yield* Effect.flip(workers.close(id, { timeout: "2 seconds" }))
        claimSurvivor = false
        if (error._tag !== "CloseFailed") return assert.fail(`expected CloseFailed, got ${error._tag}`)
        assert.strictEqual(error.workerId, id)
        assert.strictEqual(error.cleanup.activeProcesses, 1)
        assert.include(error.message, "close again")
        // The host confirmed by re-scanning itself (the owner's own scans run in its thread, with the live scan).
        const firstScans = scans
        assert.isAbove(firstScans, 0)

        // The id is kept, and its status says what happened: the connection is gone, cleanup is unconfirmed.
        const kept = yield* workers.status(id)
        assert.strictEqual(kept.workerId, id)
        assert.strictEqual(kept.state, "failed")
        assert.strictEqual(kept.lastFailure?.kind, "closing")
        assert.strictEqual(kept.cleanup?.activeProcesses, 1)
        // A request fails at once (nothing is sent to a closed connection), it does not hang until its timeout.
        const started = Date.now()
        const refused = yield* Effect.flip(workers.callTool(id, "echo", { token: "x" }, { timeout: "5 seconds" }))
        assert.isBelow(Date.now() - started, 500)
        assert.strictEqual(refused._tag, "WorkerFailed")
        if (refused._tag === "WorkerFailed") assert.strictEqual(refused.delivery, "not_sent")

        const closed = yield* workers.close(id)
        assert.strictEqual(closed.state, "closed")
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.isAbove(scans, firstScans)
        assert.strictEqual((yield* Effect.flip(workers.status(id)))._tag, "UnknownWorker")
        assert.strictEqual((yield* Effect.flip(workers.close(id)))._tag, "UnknownWorker")
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
      }),
      NodeMcpWorkers.layer().pipe(Layer.provide(survivor))
    )
  })

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

  it.live("20 workers with 2 grandchildren each, opened and closed concurrently: 0 processes, within one budget", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const config = { ...statefulConfig("--spawn-at-start", "2"), env: { TEST_TAG: t } }
        const { value: ids, wallMs: openMs } = yield* timed(
          Effect.all(
            Array.from({ length: 20 }, () => workers.open(config)),
            { concurrency: "unbounded" }
          )
        )
        assert.strictEqual(new Set(ids).size, 20)
        assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 60)

        const { value: closed, wallMs } = yield* timed(
          Effect.all(
            ids.map((id) => workers.close(id)),
            { concurrency: "unbounded" }
          )
        )
        assert.isBelow(wallMs, ProcessJob.defaultBudgetMs)
        for (const status of closed) {
          assert.strictEqual(status.cleanup?.activeProcesses, 0)
          assert.isBelow(status.cleanup?.durationMs ?? Infinity, ProcessJob.defaultBudgetMs)
        }
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        const durations = closed.map((status) => status.cleanup!.durationMs).sort((a, b) => a - b)
        yield* Effect.logInfo("close timing: 20 workers concurrently").pipe(
          Effect.annotateLogs({
            openWallMs: openMs,
            closeWallMs: wallMs,
            durationMsMin: durations[0],
            durationMsMedian: durations[10],
            durationMsMax: durations[19],
            term: closed.reduce((n, status) => n + status.cleanup!.signalled.term, 0),
            kill: closed.reduce((n, status) => n + status.cleanup!.signalled.kill, 0)
          })
        )
      })
    )
  )

  it.live("C7: closing the host layer's scope ends every worker's tree", () =>
    Effect.gen(function* () {
      const t = tag()
      const ports = activePorts()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(NodeMcpWorkers.layer(), scope)
      const workers = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const ids = yield* Effect.all(
        [1, 2, 3].map(() => workers.open({ ...statefulConfig("--spawn-at-start", "2"), env: { TEST_TAG: t } })),
        { concurrency: "unbounded" }
      )
      for (const id of ids) yield* workers.callTool(id, "spawn", { setsid: true })
      assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 12)

      const { wallMs } = yield* timed(Scope.close(scope, Exit.void))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
      assert.isBelow(wallMs, ProcessJob.defaultBudgetMs)
      assert.isTrue(yield* Effect.promise(() => eventually(() => activePorts() <= ports)))
      yield* report("host layer scope closed (3 workers)", wallMs, null)
    })
  )
})

// The host process itself ending: a real Node program (test/fixtures/host-program.ts) with the host layer.

interface HostProgram {
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly ready: Promise<void>
  readonly output: () => string
  /** The pids of the server tree, as the program printed them. */
  readonly tree: () => Array<number>
  readonly signal: (signal: NodeJS.Signals) => void
}

/** Runs the host program in `mode`; released by SIGKILL (and a sweep of its tag) only if a test failed. */
const hostProgram = (mode: "wait" | "exit", t: string, flags: ReadonlyArray<string> = []) =>
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

describe("process tree when the host process exits", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it.scopedLive(`${signal} through NodeRuntime.runMain: the layer finalizer ends the whole tree`, () =>
      Effect.gen(function* () {
        const t = tag()
        const program = yield* hostProgram("wait", t)
        yield* Effect.promise(() => program.ready)
        const tree = program.tree()
        assert.strictEqual(tree.length, 4, "server, 2 grandchildren, 1 setsid escapee")
        assert.deepStrictEqual(sorted(processesWithEnv("TEST_TAG", t)), sorted(tree))

        const { value: exit, wallMs } = yield* timed(
          Effect.promise(() => {
            program.signal(signal)
            return program.exited
          }).pipe(Effect.timeout("10 seconds"))
        )
        // It exited by itself after running its finalizers (interrupted main fiber: code 0), not by the signal.
        assert.deepStrictEqual(exit, { code: 0, signal: null })
        assert.include(program.output(), "worker closed")
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.isFalse(tree.some(isAlive))
        yield* report(`host program ${signal} to exit`, wallMs, null)
      })
    )
  }

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
})
