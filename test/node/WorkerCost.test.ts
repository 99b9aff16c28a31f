// What an open worker costs its host while it does nothing, and how its owner thread's heap is sized.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import { statefulConfig } from "../fixtures/servers.js"
import { ownerResourceLimits } from "../../packages/node/src/internal/host/ownerThread.js"
import { eventually, ownerThread, startedThreads, structured, withHost } from "./helpers.js"

/** The host thread's timers (`Timeout` among its active resources). */
const timers = (): number => process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length

describe("what a worker costs", () => {
  it.live("C87: workers that are open and idle hold no timer on the host, after calls and their budgets", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const before = timers()
        const ids = yield* Effect.forEach([1, 2, 3, 4], () => workers.open(statefulConfig("--exit-on-stdin-eof")), {
          concurrency: "unbounded"
        })
        // Calls with budgets far longer than the test: a timer of theirs left behind would still be there.
        for (const id of ids) {
          const result = yield* workers.callTool(id, "echo", { token: id }, { timeout: "10 minutes" })
          assert.strictEqual(structured(result).token, id)
        }
        assert.isTrue(
          yield* Effect.promise(() => eventually(() => timers() <= before)),
          `the host holds ${timers() - before} timer(s) more with 4 idle workers open`
        )
        yield* Effect.forEach(ids, (id) => workers.close(id), { discard: true })
      })
    )
  )

  it.live("C88: an owner thread's young generation is bounded, beside the heap limit a caller sets", () =>
    withHost(
      Effect.scoped(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const threads = yield* startedThreads
          const plain = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
          const limited = yield* workers.open(statefulConfig("--exit-on-stdin-eof"), { maxOldGenerationSizeMb: 64 })
          const plainThread = yield* ownerThread(threads, (yield* workers.status(plain)).threadId)
          const limitedThread = yield* ownerThread(threads, (yield* workers.status(limited)).threadId)
          assert.strictEqual(
            plainThread.resourceLimits?.maxYoungGenerationSizeMb,
            ownerResourceLimits.maxYoungGenerationSizeMb
          )
          assert.strictEqual(
            limitedThread.resourceLimits?.maxYoungGenerationSizeMb,
            ownerResourceLimits.maxYoungGenerationSizeMb
          )
          assert.strictEqual(limitedThread.resourceLimits?.maxOldGenerationSizeMb, 64)
          // A bounded young generation still carries a result of a megabyte.
          const big = yield* workers.callTool(plain, "big", { bytes: 1_048_576 })
          assert.strictEqual((big.content[0] as { text: string }).text.length, 1_048_576)
          yield* Effect.forEach([plain, limited], (id) => workers.close(id), { discard: true })
        })
      )
    )
  )
})
