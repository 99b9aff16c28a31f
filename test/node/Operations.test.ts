// The request operations of the table beyond tools (resources, templates, prompts, completions, ping), one
// behaviour suite run against the host service, the Promise client in the host's thread, and the Promise client
// in a remote thread; plus the rules every request shares.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { makePromiseClient } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { statefulConfig } from "../fixtures/servers.js"
import { withHost } from "./helpers.js"
import { exercise, exerciseProgress, expected, expectedProgress, type Surface } from "./operationsSuite.js"
import { bundleRemoteEntry, runInThread } from "./remoteThread.js"

let entry = ""
let remove = () => {}
beforeAll(async () => {
  ;({ entry, remove } = await bundleRemoteEntry())
})
afterAll(() => remove())

describe("request operations beyond tools, and progress", () => {
  it.live("the host service", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const surface: Surface = Object.fromEntries(
          Object.keys(Operations.requests).map((name) => [
            name,
            (...args: Array<unknown>) =>
              Effect.runPromise(Effect.either((workers as any)[name](...args) as Effect.Effect<unknown, unknown>)).then(
                (either) => (either._tag === "Right" ? either.right : Promise.reject(either.left))
              )
          ])
        ) as unknown as Surface
        assert.deepStrictEqual(yield* Effect.promise(() => exercise(surface, id)), expected)
        assert.deepStrictEqual(yield* Effect.promise(() => exerciseProgress(surface, id)), expectedProgress)
      })
    )
  )

  it.live("the Promise client in the host's thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const mcp = makePromiseClient()
        const seen = yield* Effect.promise(() =>
          exercise(mcp, id)
            .then(async (operations) => [operations, await exerciseProgress(mcp, id)])
            .finally(() => mcp.dispose())
        )
        assert.deepStrictEqual(seen, [expected, expectedProgress])
      })
    )
  )

  it.live("the Promise client in a remote thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const outcome = yield* runInThread(entry, { scenario: "operations", data: { id } })
        assert.isTrue(outcome.ok)
        assert.deepStrictEqual(outcome.ok ? outcome.value : null, { operations: expected, progress: expectedProgress })
      })
    )
  )

  it.live("every request follows the same rules: busy is not sent, a spent budget sends nothing", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const slow = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 2_000 }))
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        for (const busy of [
          workers.readResource(id, "memo://count"),
          workers.listPrompts(id),
          workers.ping(id),
          workers.complete(id, { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "" } })
        ]) {
          const error = yield* Effect.flip(busy as Effect.Effect<unknown, { _tag: string }>)
          assert.strictEqual(error._tag, "WorkerBusy")
        }
        yield* Fiber.interrupt(slow)
        const spent = yield* Effect.flip(workers.ping(id, { timeout: 0 }))
        assert.strictEqual(spent._tag, "DeadlineExceeded")
        const cancelled = yield* Effect.flip(workers.readResource(id, "memo://count", { timeout: "1 millis" }))
        assert.oneOf(cancelled._tag, ["DeliveryUnknown", "DeadlineExceeded"])
        assert.deepStrictEqual(yield* workers.ping(id), {})
      })
    )
  )
})
