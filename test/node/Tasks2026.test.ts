// Tasks on the 2026-07-28 revision, the `io.modelcontextprotocol/tasks` extension, against a fixture of ours written
// to the extension's spec: the suite of tasks26Suite.ts from the host service, the Promise client in the host's
// thread and a Promise client in a remote thread, each seeing the same answers.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { fixturePath } from "../fixtures/servers.js"
import { withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { exerciseTasks26, expectedTasks26 } from "./tasks26Suite.js"
import { clarification, type TaskSurface } from "./tasksSuite.js"

const tasks26 = { command: process.execPath, args: [fixturePath("tasks26"), "--exit-on-stdin-eof"] }

const layer = NodeMcpWorkers.layer({ handlers: { elicitation: () => Effect.succeed(clarification) } })

const entry = remoteEntry()

const promised = (workers: McpWorkers["Type"]): TaskSurface =>
  Object.fromEntries(
    [...Object.keys(Operations.requests), "status"].map((name) => [
      name,
      (...args: Array<unknown>) =>
        Effect.runPromise(Effect.either((workers as any)[name](...args) as Effect.Effect<unknown, unknown>)).then(
          (either) => (either._tag === "Right" ? either.right : Promise.reject(either.left))
        )
    ])
  ) as unknown as TaskSurface

describe("C70-C75c: tasks on the 2026-07-28 revision, against a fixture of the extension's spec", () => {
  it.live("the host service", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasks26)
      assert.strictEqual((yield* workers.status(id)).era, "modern")
      assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks26(promised(workers), id)), expectedTasks26)
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(layer))
  )

  it.live("the Promise client in the host's thread", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasks26)
      assert.deepStrictEqual(yield* withPromiseClient((mcp) => exerciseTasks26(mcp, id)), expectedTasks26)
      yield* workers.close(id)
    }).pipe(Effect.provide(layer))
  )

  it.live("the Promise client in a remote thread", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(tasks26)
      const outcome = yield* runInThread(entry(), { scenario: "tasks26", data: { id } })
      assert.isTrue(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error))
      assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedTasks26)
      yield* workers.close(id)
    }).pipe(Effect.provide(layer))
  )
})
