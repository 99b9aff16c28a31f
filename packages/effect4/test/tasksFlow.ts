// The task flow of the Effect 4 face, run on every surface that offers it (the service in the host's thread and in a
// remote thread, McpClient) against the task fixture, whose `survey` requires a task and ends only once a file exists
// at `until`: so "still working" after a wait its budget ended is a fact, not a race with a timer.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as McpWorkers from "../src/McpWorkers.js"
import * as Tasks from "../src/Tasks.js"
import type { WorkerStatus } from "../src/WorkerStatus.js"

const text = (result: McpWorkers.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? String(block.text) : "")).join("\n")

/** Runs a task from start to result, a second to its cancel, and answers what it saw as plain data. */
export const exerciseTasks = (
  workers: McpWorkers.Requests,
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
    // Its wait says how it ended, a tag the face's failures name (C123).
    const ended = yield* workers.taskResult(id, doomed.task.taskId).pipe(
      Effect.as("answered"),
      Effect.catchTag("TaskEnded", (error) => Effect.succeed([error._tag, error.state, error.delivery]))
    )
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
      ended,
      listed: listedTasks,
      unknown: unknown._tag,
      secret: [taskId, doomed.task.taskId].some((one) => shown.includes(one))
    }
  })

/** What every surface must see. */
export const expected = {
  support: { taskSupport: "required" },
  plain: ["InvalidInput", "not_sent", "name", true],
  started: ["working", 120_000],
  working: "working",
  shortWait: ["DeliveryUnknown", "timeout", "unknown"],
  afterWait: "working",
  result: ["report on tides", true],
  done: [true, "completed"],
  cancelled: "cancelled",
  ended: ["TaskEnded", "cancelled", "delivered"],
  listed: [
    [true, "completed"],
    [false, "cancelled"]
  ],
  unknown: "ServerError",
  secret: false
}
