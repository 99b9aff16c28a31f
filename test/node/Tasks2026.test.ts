// Tasks on the 2026-07-28 revision, the `io.modelcontextprotocol/tasks` extension, against a fixture of ours written
// to the extension's spec: the suite of tasks26Suite.ts from the host service, the Promise client in the host's
// thread, a Promise client in a remote thread and a socket peer by grant, each seeing the same answers; over Streamable HTTP, the header that
// routes a task's requests.
import { assert, describe, it, layer as sharing } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { fixturePath, startHttpFixture } from "../fixtures/servers.js"
import { withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { exerciseTasks26, expectedTasks26 } from "./tasks26Suite.js"
import { clarification } from "./tasksSuite.js"
import { handlers, listening, promised } from "./tasksPromised.js"

const tasks26 = { command: process.execPath, args: [fixturePath("tasks26"), "--exit-on-stdin-eof"] }

const layer = NodeMcpWorkers.layer({ handlers })

const entry = remoteEntry()

describe("C70-C75c: tasks on the 2026-07-28 revision, against a fixture of the extension's spec", () => {
  // One host for the suite's surfaces, each on a worker of its own: they run at once, as each mostly waits on its
  // tasks. No other host starts meanwhile: the Promise clients and the remote thread reach the process's newest host.
  sharing(layer, { excludeTestServices: true })((it) => {
    it.effect(
      "the host service",
      () =>
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(tasks26)
          assert.strictEqual((yield* workers.status(id)).era, "modern")
          assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks26(promised(workers), id)), expectedTasks26)
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
          const id = yield* workers.open(tasks26)
          assert.deepStrictEqual(yield* withPromiseClient((mcp) => exerciseTasks26(mcp, id)), expectedTasks26)
          yield* workers.close(id)
        }),
      { concurrent: true }
    )

    it.effect(
      "the Promise client in a remote thread",
      () =>
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(tasks26)
          const outcome = yield* runInThread(entry(), { scenario: "tasks26", data: { id } })
          assert.isTrue(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error))
          assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedTasks26)
          yield* workers.close(id)
        }),
      { concurrent: true }
    )
  })
})

describe("C71, C75: a socket peer by grant on the 2026-07-28 revision", () => {
  it.scopedLive("the suite through a grant, where a task it did not start is refused before sending", () =>
    Effect.gen(function* () {
      const { grants, mcp, workers } = yield* listening
      const id = yield* workers.open(tasks26)
      const grant = yield* grants.grant(id)
      assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks26(mcp, grant)), {
        ...expectedTasks26,
        unknown: { _tag: "InvalidInput", delivery: "not_sent", startTask: false }
      })
    })
  )
})

interface Log {
  readonly headers: ReadonlyArray<{ readonly mcpMethod: string | null; readonly mcpName: string | null }>
}

describe("C75c: over Streamable HTTP a task's requests name the task in Mcp-Name", () => {
  it.scopedLive("tasks/get, tasks/update and tasks/cancel carry Mcp-Name: <taskId>", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("modern-http", "--tasks")),
        (fixture) => Effect.promise(() => fixture.stop())
      )
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url })
      const asking = yield* workers.startTask(id, "research", { topic: "tides", ask: true, stages: 1, stageMs: 10 })
      const taskId = asking.task.taskId
      const result = (yield* workers.taskResult(id, taskId, { timeout: "60 seconds" })) as {
        content: Array<{ text: string }>
      }
      assert.strictEqual(result.content[0]?.text, `research: tides (${clarification.content.interpretation})`)
      const gated = yield* workers.startTask(id, "research", { topic: "moot", gate: "h1" })
      assert.strictEqual((yield* workers.cancelTask(id, gated.task.taskId)).status, "cancelled")
      yield* workers.close(id)
      const log = yield* Effect.promise(() => server.log() as unknown as Promise<Log>)
      const named = (method: string) =>
        log.headers
          .filter((h) => h.mcpMethod === method)
          .map((h) => h.mcpName === taskId || h.mcpName === gated.task.taskId)
      // Each task request names its task; no other request names one (a tools/call names its tool).
      for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
        assert.isNotEmpty(named(method), method)
        assert.isTrue(named(method).every(Boolean), method)
      }
      const others = log.headers.filter((h) => !h.mcpMethod?.startsWith("tasks/"))
      assert.isFalse(others.some((h) => h.mcpName === taskId || h.mcpName === gated.task.taskId))
    }).pipe(Effect.provide(layer))
  )
})

describe("C124: a request of the extension that its budget ends is cancelled exactly", () => {
  it.live("a wait whose tasks/get is held back past its budget cancels that tasks/get, and the worker goes on", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasks26)
      // The fixture holds back each tasks/get of this task for a minute: the wait's first read is in flight when its
      // budget ends.
      const slow = yield* workers.startTask(id, "research", { topic: "slow", gate: "s1", slowGetMs: 60_000 })
      const wait = yield* Effect.flip(workers.taskResult(id, slow.task.taskId, { timeout: "300 millis" }))
      assert.deepStrictEqual(
        [wait._tag, wait.delivery, (wait as { reason?: string }).reason],
        ["DeliveryUnknown", "unknown", "timeout"]
      )
      const text = (result: { content: Array<any> }) => result.content[0].text as string
      // The server was told of exactly that request; its late answer, if it comes, reaches nobody.
      assert.deepStrictEqual(JSON.parse(text(yield* workers.callTool(id, "cancels"))), ["tasks/get"])
      assert.strictEqual(text(yield* workers.callTool(id, "quick", { topic: "after" })), "quick: after")
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("over Streamable HTTP the same wait closes that tasks/get's stream, and tells nothing more", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("modern-http", "--tasks")),
        (fixture) => Effect.promise(() => fixture.stop())
      )
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url })
      const slow = yield* workers.startTask(id, "research", { topic: "slow", gate: "h9", slowGetMs: 60_000 })
      const wait = yield* Effect.flip(workers.taskResult(id, slow.task.taskId, { timeout: "300 millis" }))
      assert.deepStrictEqual([wait._tag, (wait as { reason?: string }).reason], ["DeliveryUnknown", "timeout"])
      const after = (yield* workers.callTool(id, "quick", { topic: "after" })) as { content: Array<{ text: string }> }
      assert.strictEqual(after.content[0]?.text, "quick: after")
      interface Log {
        readonly cancelled: ReadonlyArray<{ readonly requestId: unknown; readonly reason: string }>
        readonly headers: ReadonlyArray<{ readonly mcpMethod: string | null }>
      }
      // The fixture records the closed stream when its socket tells it; read before the close, which ends the
      // connection's own streams too.
      let log = (yield* Effect.promise(() => server.log())) as unknown as Log
      while (log.cancelled.length === 0) {
        yield* Effect.sleep(10)
        log = (yield* Effect.promise(() => server.log())) as unknown as Log
      }
      assert.deepStrictEqual(
        log.cancelled.map((c) => [String(c.requestId).startsWith("mcpw-task-"), c.reason]),
        [[true, "response stream closed"]]
      )
      assert.isFalse(log.headers.some((h) => h.mcpMethod === "notifications/cancelled"))
      yield* workers.close(id)
    }).pipe(Effect.provide(layer))
  )
})
