// Tasks against the published server-everything (stdio): one suite (tasksSuite.ts) from the host service, the Promise
// client in the host's thread and a Promise client in a remote thread, each seeing the same answers; the server's
// question during a task reaches the host's ordinary elicitation handler.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { clarification, exerciseTasks, expectedTasks, type TaskSurface } from "./tasksSuite.js"

const require = createRequire(import.meta.url)

/** server-everything over stdio. */
export const everything = {
  command: process.execPath,
  args: [require.resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}

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

describe("C70-C74: tasks against the published server-everything", () => {
  it.live("the host service", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(everything)
      assert.deepStrictEqual(yield* Effect.promise(() => exerciseTasks(promised(workers), id)), expectedTasks)
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(layer))
  )

  it.live("the Promise client in the host's thread", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(everything)
      assert.deepStrictEqual(yield* withPromiseClient((mcp) => exerciseTasks(mcp, id)), expectedTasks)
    }).pipe(Effect.provide(layer))
  )

  it.live("the Promise client in a remote thread", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(everything)
      const outcome = yield* runInThread(entry(), { scenario: "tasks", data: { id } })
      assert.isTrue(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error))
      assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedTasks)
    }).pipe(Effect.provide(layer))
  )
})
