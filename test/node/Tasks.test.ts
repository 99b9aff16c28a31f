// Tasks against the published server-everything (stdio): one suite (tasksSuite.ts) from the host service, the Promise
// client in the host's thread and a Promise client in a remote thread, each seeing the same answers; the server's
// question during a task reaches the host's ordinary elicitation handler.
import { assert, describe, it, layer as sharing } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fixturePath, modernConfig, statefulConfig } from "../fixtures/servers.js"
import { withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { exerciseTasks, expectedTasks, researchTool, type TaskSurface } from "./tasksSuite.js"
import { handlers, listening, promised } from "./tasksPromised.js"

const require = createRequire(import.meta.url)

/** server-everything over stdio. */
export const everything = {
  command: process.execPath,
  args: [require.resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}

const layer = NodeMcpWorkers.layer({ handlers })

const entry = remoteEntry()

describe("C70-C74: tasks against the published server-everything", () => {
  // One host for the suite's surfaces, each on a worker of its own: they run at once, as each mostly waits on its
  // tasks. No other host starts meanwhile: the Promise clients and the remote thread reach the process's newest host.
  sharing(layer, { excludeTestServices: true })((it) => {
    it.effect(
      "the host service",
      () =>
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(everything)
          assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks(promised(workers), id)), expectedTasks)
          const closed = yield* workers.close(id)
          assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        }),
      { concurrent: true }
    )

    it.effect(
      "the Promise client in the host's thread",
      () =>
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(everything)
          assert.deepStrictEqual(yield* withPromiseClient((mcp) => exerciseTasks(mcp, id)), expectedTasks)
        }),
      { concurrent: true }
    )

    it.effect(
      "McpClient: one connection in the calling thread",
      () =>
        McpClient.withClient(
          everything,
          (client) => {
            const surface = Object.fromEntries(
              Object.keys(Operations.requests).map((name) => [
                name,
                (_id: string, ...args: Array<unknown>) =>
                  Effect.runPromise(
                    Effect.either((client as any)[name](...args) as Effect.Effect<unknown, unknown>)
                  ).then((either) => (either._tag === "Right" ? either.right : Promise.reject(either.left)))
              ])
            )
            const status = () => Effect.runPromise(client.status)
            return Effect.promise(() =>
              exerciseTasks({ ...surface, status } as unknown as TaskSurface, client.workerId)
            )
          },
          { handlers }
        ).pipe(Effect.map((seen) => assert.deepStrictEqual(seen, expectedTasks))),
      { concurrent: true }
    )

    it.effect(
      "the Promise client in a remote thread",
      () =>
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(everything)
          const outcome = yield* runInThread(entry(), { scenario: "tasks", data: { id } })
          assert.isTrue(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error))
          assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedTasks)
        }),
      { concurrent: true }
    )
  })
})

describe("C71: a socket peer by grant reaches only the tasks started through its grant", () => {
  it.scopedLive("the suite through a grant, where a task it did not start is refused before sending", () =>
    Effect.gen(function* () {
      const { grants, mcp, workers } = yield* listening
      const id = yield* workers.open(everything)
      const grant = yield* grants.grant(id)
      assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks(mcp, grant)), {
        ...expectedTasks,
        unknown: "InvalidInput"
      })
    })
  )

  it.scopedLive("a handle from one grant works through it and the host, never through another grant", () =>
    Effect.gen(function* () {
      const { grants, mcp, workers } = yield* listening
      const id = yield* workers.open(everything)
      const mine = yield* grants.grant(id)
      const other = yield* grants.grant(id)
      const { task } = yield* Effect.promise(() => mcp.startTask(mine, researchTool, { topic: "grants" }))
      const refused = yield* Effect.promise(() =>
        mcp.getTask(other, task.taskId).then(
          () => undefined,
          (error) => error
        )
      )
      assert.strictEqual(refused._tag, "InvalidInput")
      assert.strictEqual(refused.delivery, "not_sent")
      assert.notInclude(refused.message, task.taskId)
      const cancelRefused = yield* Effect.promise(() =>
        mcp.cancelTask(other, task.taskId).then(
          () => "cancelled",
          (error) => error._tag
        )
      )
      assert.strictEqual(cancelRefused, "InvalidInput")
      assert.deepStrictEqual((yield* Effect.promise(() => mcp.listTasks(other))).tasks, [])
      const own = (yield* Effect.promise(() => mcp.listTasks(mine))).tasks.map((t: { taskId: string }) => t.taskId)
      assert.deepStrictEqual(own, [task.taskId])
      // The host holds every handle of its workers.
      assert.strictEqual((yield* workers.getTask(id, task.taskId)).taskId, task.taskId)
      const cancelled = yield* Effect.promise(() => mcp.cancelTask(mine, task.taskId))
      assert.strictEqual(cancelled.status, "cancelled")
    })
  )
})

const tasksFixture = { command: process.execPath, args: [fixturePath("tasks")] }

const failureOf = <A, E>(effect: Effect.Effect<A, E>) => Effect.flip(effect) as Effect.Effect<any>

describe("C70, C72-C74: tasks against a fixture of ours", () => {
  it.live("a tool whose task support is optional works both ways; one listed without it is never started", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasksFixture)
      const text = (result: { content: Array<any> }) => result.content[0].text
      assert.strictEqual(text(yield* workers.callTool(id, "report", { topic: "plain" })), "report on plain")
      const started = yield* workers.startTask(id, "report", { topic: "task" })
      assert.strictEqual(text(yield* workers.taskResult(id, started.task.taskId)), "report on task")
      const support = (yield* workers.listTools(id)).tools.map((tool) => [tool.name, tool.execution?.taskSupport])
      assert.deepStrictEqual(support, [
        ["count", "forbidden"],
        ["report", "optional"],
        ["held", "optional"],
        ["survey", "required"]
      ])
      assert.strictEqual(text(yield* workers.callTool(id, "report", { topic: "listed" })), "report on listed")
      const refused = yield* failureOf(workers.startTask(id, "count"))
      assert.deepStrictEqual([refused._tag, refused.delivery, refused.path], ["InvalidInput", "not_sent", "name"])
      // Nothing reached the server: the counter's first call answers 1.
      assert.strictEqual(text(yield* workers.callTool(id, "count")), "1")
    }).pipe(Effect.provide(layer))
  )

  it.live(
    "C72: a tool that requires a task, called plainly on a fresh worker, is refused unsent: the tools are listed first",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(tasksFixture)
        const refused = yield* failureOf(workers.callTool(id, "survey", { topic: "plain" }))
        assert.deepStrictEqual([refused._tag, refused.delivery, refused.path], ["InvalidInput", "not_sent", "name"])
        assert.include(refused.message, "startTask")
        // A tool the listing showed as plain runs; nothing of the refused call reached the server (the counter's first).
        const text = (result: { content: Array<any> }) => result.content[0].text
        assert.strictEqual(text(yield* workers.callTool(id, "count")), "1")
        assert.strictEqual(text(yield* workers.callTool(id, "report", { topic: "plain" })), "report on plain")
        assert.isFalse((yield* workers.status(id)).busy)
        yield* workers.close(id)
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive("a start whose answer does not come is unknown, never sent again, and listTasks finds its task", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasksFixture)
      const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-task-")), "created")
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(path.dirname(marker), { recursive: true })))
      const start = yield* Effect.fork(
        failureOf(workers.startTask(id, "held", { topic: "lost", holdMs: 60_000, marker }, { timeout: "60 seconds" }))
      )
      // The server created the task and holds back its answer: the start ends here, as a lost answer would.
      while (!fs.existsSync(marker)) yield* Effect.sleep(10)
      yield* workers.cancel(id, (yield* workers.status(id)).requestId!)
      const lost = yield* Fiber.join(start)
      assert.deepStrictEqual([lost._tag, lost.reason, lost.delivery], ["DeliveryUnknown", "cancelled", "unknown"])
      const { tasks } = yield* workers.listTasks(id)
      assert.strictEqual(tasks.length, 1)
      const found = yield* workers.taskResult(id, tasks[0]!.taskId)
      assert.strictEqual((found.content[0] as { text: string }).text, "report on lost")
      assert.strictEqual((yield* workers.listTasks(id)).tasks.length, 1)
    }).pipe(Effect.provide(layer))
  )

  it.live("a cancel answers the state after it; a task that ended first stays ended, its id kept out of errors", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasksFixture)
      const running = yield* workers.startTask(id, "report", { topic: "long", ms: 60_000 })
      assert.strictEqual((yield* workers.cancelTask(id, running.task.taskId)).status, "cancelled")
      assert.strictEqual((yield* workers.getTask(id, running.task.taskId)).status, "cancelled")
      const quick = yield* workers.startTask(id, "report", { topic: "quick" })
      yield* workers.taskResult(id, quick.task.taskId)
      const late = yield* failureOf(workers.cancelTask(id, quick.task.taskId))
      assert.strictEqual(late._tag, "ServerError")
      assert.notInclude(late.message, quick.task.taskId)
      assert.strictEqual((yield* workers.getTask(id, quick.task.taskId)).status, "completed")
    }).pipe(Effect.provide(layer))
  )

  it.live("C123: a wait on a task that ended without a result says how it ended, its id kept out", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasksFixture)
      const running = yield* workers.startTask(id, "report", { topic: "long", ms: 60_000 })
      yield* workers.cancelTask(id, running.task.taskId)
      const cancelled = yield* failureOf(workers.taskResult(id, running.task.taskId))
      assert.deepStrictEqual(
        [cancelled._tag, cancelled.delivery, cancelled.state, cancelled.code],
        ["TaskEnded", "delivered", "cancelled", undefined]
      )
      const failing = yield* workers.startTask(id, "report", { topic: "bad", failWith: "the report broke" })
      const failed = yield* failureOf(workers.taskResult(id, failing.task.taskId, { timeout: "60 seconds" }))
      assert.deepStrictEqual(
        [failed._tag, failed.delivery, failed.state, failed.statusMessage],
        ["TaskEnded", "delivered", "failed", "the report broke ([task])"]
      )
      assert.isNumber(failed.code)
      assert.notInclude(failed.message, failing.task.taskId)
      assert.isFalse((yield* workers.status(id)).busy)
    }).pipe(Effect.provide(layer))
  )
})

describe("C75: where the server declares no tasks, they are refused before sending", () => {
  it.live(
    "a 2026-07-28 server without the extension and one without task capabilities refuse every task operation",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        for (const config of [modernConfig("--exit-on-stdin-eof"), statefulConfig("--exit-on-stdin-eof")]) {
          const id = yield* workers.open(config)
          const refusals = yield* Effect.forEach(
            [
              workers.startTask(id, "echo", {}) as Effect.Effect<unknown, unknown>,
              workers.getTask(id, "t"),
              workers.taskResult(id, "t"),
              workers.cancelTask(id, "t"),
              workers.listTasks(id)
            ],
            (effect) => Effect.map(failureOf(effect), (error) => [error._tag, error.delivery])
          )
          assert.deepStrictEqual(refusals, Array(5).fill(["InvalidInput", "not_sent"]))
          assert.deepStrictEqual(yield* workers.ping(id), {})
        }
      }).pipe(Effect.provide(layer))
  )
})
