// End-to-end process-tree cleanup (C19–C21 and the platform notes of docs/contract.md): real host registry, real
// owner threads, real fixture server processes with grandchildren. ProcessJob.test.ts covers the job module alone;
// this file checks that the host and the owner use it so that every path — close, CloseFailed and retry, a dead
// owner thread, the layer's finalizer and the host process's own exit — leaves no process of the worker's tree,
// and only of it.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as ProcessJob from "../../packages/node/src/ProcessJob.js"
import { statefulConfig } from "../fixtures/servers.js"
import { activePorts, eventually, isAlive, processesWithEnv, structured, tag, withHost } from "./helpers.js"
import { hostCloseCases, hostDeathCases, hostProgram, report, sorted, timed } from "./processTreeSuite.js"

describe("process tree (stdio) through the host", () => {
  hostCloseCases()

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

  hostDeathCases("linux")
})
