// Tasks on the Effect 4 face (C69, C70-C74): the task flow (tasksFlow.ts) against the task fixture on the service in
// the host's thread, in a remote thread and on McpClient; and the root's task suite (server-everything, its question
// answered by an Effect 4 handler) on the service, which must see what every Effect 3 surface sees.
import { assert, describe, it } from "@effect/vitest"
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
import { remoteEntry, runInThread } from "./remoteThread.js"
import { run } from "./surface.js"
import { exerciseTasks, expected } from "./tasksFlow.js"

const tasksFixture = { command: process.execPath, args: [fixturePath("tasks")] }

const everything = {
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}

const entry = remoteEntry()

const freshDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-effect4-tasks-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

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

  it.live("a remote thread: the same flow through layerRemote, on a worker of the host", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const dir = yield* freshDir
      const id = yield* workers.open(tasksFixture)
      const outcome = yield* runInThread(entry(), "tasks", { id, dir })
      assert.isTrue(outcome.ok, outcome.ok ? "" : outcome.error)
      assert.deepStrictEqual<unknown>(outcome.ok ? outcome.value : undefined, expected)
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
