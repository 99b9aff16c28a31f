// Tasks on the Effect 4 face (C69, C70-C74), end to end against the task fixture: one flow run on the service and on
// McpClient. The fixture's task ends when the test writes a file, so "still working" after a wait its budget ended is
// a fact, not a race with a timer. The root's task suite (server-everything, a question answered by an Effect 4
// handler) runs on the service too, and must see what every Effect 3 surface sees.
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fixturePath } from "../../../test/fixtures/servers.js"
import { clarification, exerciseTasks as exerciseEverything, expectedTasks } from "../../../test/node/tasksSuite.js"
import type { TaskSurface } from "../../../test/node/tasksSuite.js"
import { arities } from "../src/internal/face.js"
import * as McpClient from "../src/McpClient.js"
import { McpWorkers } from "../src/McpWorkers.js"
import type * as McpWorkersTypes from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import * as Tasks from "../src/Tasks.js"
import type { WorkerStatus } from "../src/WorkerStatus.js"
import { run } from "./surface.js"

const tasksFixture = { command: process.execPath, args: [fixturePath("tasks")] }

const everything = {
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}

const freshDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-effect4-tasks-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const text = (result: McpWorkersTypes.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? String(block.text) : "")).join("\n")

/** Runs a task from start to result, a second to its cancel, and answers what it saw as plain data. */
const exerciseTasks = (
  workers: McpWorkersTypes.Requests,
  id: string,
  status: Effect.Effect<WorkerStatus, unknown>,
  dir: string
) =>
  Effect.gen(function* () {
    // What the tools declared is learnt from a listing (C72).
    const listed = (yield* workers.listTools(id)).tools.find((tool) => tool.name === "survey")
    const plain = yield* workers.callTool(id, "survey", { topic: "plain" }).pipe(
      Effect.as("sent"),
      Effect.catchTag("InvalidInput", (error) =>
        Effect.succeed([error._tag, error.delivery, error.path, error.message.includes("startTask")])
      )
    )
    const finish = path.join(dir, "finish")
    // An Effect 4 Duration reaches the server as milliseconds.
    const started = yield* workers.startTask(
      id,
      "survey",
      { topic: "tides", until: finish },
      { ttl: Duration.minutes(2) }
    )
    const taskId = started.task.taskId
    const working = (yield* workers.getTask(id, taskId)).status
    // The task cannot end before `finish` exists: this wait ends by its budget alone, and only the wait ends (C73).
    const shortWait = yield* workers.taskResult(id, taskId, { timeout: Duration.millis(300) }).pipe(
      Effect.as("answered"),
      Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed([error._tag, error.reason, error.delivery]))
    )
    const afterWait = (yield* workers.getTask(id, taskId)).status
    fs.writeFileSync(finish, "")
    const result = yield* workers.taskResult(id, taskId, { timeout: Duration.minutes(1) })
    const done = yield* workers.getTask(id, taskId)
    const doomed = yield* workers.startTask(id, "survey", { topic: "moot", until: path.join(dir, "never") })
    const cancelled = yield* workers.cancelTask(id, doomed.task.taskId)
    const listedTasks = (yield* workers.listTasks(id)).tasks.map((task) => [task.taskId === taskId, task.status])
    const unknown = yield* Effect.flip(workers.getTask(id, "no-such-task"))
    // A task id is a secret: no status shows one (C71).
    const shown = JSON.stringify(yield* status)
    return {
      support: listed?.execution,
      plain,
      started: [started.task.status, started.task.ttl],
      working,
      shortWait,
      afterWait,
      result: [
        text(result),
        (result._meta?.[Tasks.relatedTaskKey] as { taskId?: string } | undefined)?.taskId === taskId
      ],
      done: [done.taskId === taskId, done.status],
      cancelled: cancelled.status,
      listed: listedTasks,
      unknown: unknown._tag,
      secret: [taskId, doomed.task.taskId].some((one) => shown.includes(one))
    }
  })

const expected = {
  support: { taskSupport: "required" },
  plain: ["InvalidInput", "not_sent", "name", true],
  started: ["working", 120_000],
  working: "working",
  shortWait: ["DeliveryUnknown", "timeout", "unknown"],
  afterWait: "working",
  result: ["report on tides", true],
  done: [true, "completed"],
  cancelled: "cancelled",
  listed: [
    [true, "completed"],
    [false, "cancelled"]
  ],
  unknown: "ServerError",
  secret: false
}

describe("tasks on the Effect 4 face (C69, C70-C74)", () => {
  it.live("the service: start, status, a wait its budget ends, the result, cancel and list; required is refused", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const dir = yield* freshDir
      const id = yield* workers.open(tasksFixture)
      assert.deepStrictEqual<unknown>(yield* exerciseTasks(workers, id, workers.status(id), dir), expected)
      assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("McpClient: the same flow on one connection in this thread", () =>
    Effect.gen(function* () {
      const dir = yield* freshDir
      const seen = yield* McpClient.withClient(tasksFixture, (client) => {
        // The connection's requests by id, as the service has them: the id is the connection's own.
        const byId = Object.fromEntries(
          Object.entries(client).map(([name, f]) => [
            name,
            typeof f === "function" ? (_id: string, ...rest: Array<unknown>) => f(...rest) : f
          ])
        ) as unknown as McpWorkersTypes.Requests
        return exerciseTasks(byId, client.workerId, client.status, dir)
      })
      assert.deepStrictEqual<unknown>(seen, expected)
    }).pipe(Effect.scoped)
  )

  it.live(
    "the root's task suite on the service against server-everything, its question answered by an Effect 4 handler",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(everything)
        // Every request of the table, and status, as the suite's Promises.
        const surface = Object.fromEntries(
          [...Object.keys(arities), "status"].map((name) => [
            name,
            (...args: Array<unknown>) =>
              run(
                (workers as unknown as Record<string, (...args: Array<unknown>) => Effect.Effect<unknown>>)[name]!(
                  ...args
                )
              )
          ])
        ) as unknown as TaskSurface
        assert.deepStrictEqual(yield* Effect.promise(() => exerciseEverything(surface, id)), expectedTasks)
        assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
      }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers: { elicitation: () => Effect.succeed(clarification) } }))),
    120_000
  )
})
