// Server notifications (`events`) and their counters in `status`: one behaviour suite run through the Promise client
// in the host's thread and in a remote thread, the host's own Stream, and what a flood costs with nobody reading.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient } from "@mcp-worker/node"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { statefulConfig } from "../fixtures/servers.js"
import { withHost, withPromiseClient } from "./helpers.js"
import { exerciseEvents, expectedEvents, expectedSubscribeThenBusy } from "./operationsSuite.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const every = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/updated",
  "notifications/message"
]

describe("C30: events: the worker's server notifications, from any thread", () => {
  it.live("the Promise client in the host's thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const seen = yield* withPromiseClient((mcp) => exerciseEvents(mcp, id))
        assert.deepStrictEqual(seen, expectedEvents)
      })
    )
  )

  it.live("the Promise client in a remote thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const outcome = yield* runInThread(entry(), { scenario: "events", data: { id } })
        assert.isTrue(outcome.ok)
        assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedEvents)
      })
    )
  )

  it.live("a status read in a remote thread after an answer counts every notification sent before it", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const outcome = yield* runInThread(entry(), { scenario: "countsAfterAnswer", data: { id } })
        assert.deepStrictEqual(outcome.ok ? outcome.value : outcome, Array(8).fill(500))
      })
    )
  )

  it.live("a remote thread's subscription reaches the host before the call it makes next, however busy it is", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const outcome = yield* runInThread(entry(), { scenario: "subscribeThenBusy", data: { id } })
        assert.deepStrictEqual(outcome.ok ? outcome.value : outcome, expectedSubscribeThenBusy)
      })
    )
  )

  it.live("the host's Stream: in order, bounded per subscriber, ended by close", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        // Every kind, in the order the server sent them, to every subscriber.
        const first = yield* Effect.fork(Stream.runCollect(Stream.take(workers.events(id), every.length)))
        const second = yield* Effect.fork(Stream.runCollect(Stream.take(workers.events(id), every.length)))
        yield* Effect.sleep(20)
        yield* workers.callTool(id, "notify", { methods: every })
        for (const fiber of [first, second]) {
          const methods = Chunk.toReadonlyArray(yield* Fiber.join(fiber)).map((e) => e.method)
          assert.deepStrictEqual(methods, every)
        }
        // A subscriber that reads nothing keeps its newest `capacity`, and the rest are counted as dropped.
        const dropped = (yield* workers.status(id)).notifications.dropped
        const slow = yield* Effect.scoped(
          Effect.gen(function* () {
            const pull = yield* Stream.toPull(workers.events(id, { capacity: 3 }))
            // The subscription starts with the stream's first read; a zero-time race would read nothing yet.
            const reading = yield* Effect.fork(pull)
            yield* Effect.sleep(20)
            yield* workers.callTool(id, "notify", { methods: ["notifications/message"], count: 10 })
            const firstRead = Chunk.toReadonlyArray(yield* Fiber.join(reading))
            const rest = Chunk.toReadonlyArray(yield* pull)
            return [...firstRead, ...rest].map((e) => e.params.data)
          })
        )
        assert.deepStrictEqual(slow.slice(-3), ["line 7", "line 8", "line 9"])
        assert.strictEqual((yield* workers.status(id)).notifications.dropped - dropped, 10 - slow.length)
        // Closing the worker ends every stream after what it had buffered.
        const ending = yield* Effect.fork(Stream.runCollect(workers.events(id)))
        yield* Effect.sleep(20)
        yield* workers.callTool(id, "notify", { methods: ["notifications/prompts/list_changed"] })
        yield* workers.close(id)
        const rest = Chunk.toReadonlyArray(yield* Fiber.join(ending)).map((e) => e.method)
        assert.deepStrictEqual(rest, ["notifications/prompts/list_changed"])
      })
    )
  )

  it.live("a worker whose connection is gone ends its streams; a new one ends at once", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const ending = yield* Effect.fork(Stream.runCollect(workers.events(id)))
        yield* Effect.sleep(20)
        yield* workers.callTool(id, "notify", { methods: ["notifications/tools/list_changed"] })
        yield* Effect.either(workers.callTool(id, "exit", { code: 7 }))
        const seen = Chunk.toReadonlyArray(yield* Fiber.join(ending)).map((e) => e.method)
        assert.deepStrictEqual(seen, ["notifications/tools/list_changed"])
        assert.strictEqual((yield* workers.status(id)).state, "failed")
        assert.strictEqual(Chunk.size(yield* Stream.runCollect(workers.events(id))), 0)
        yield* workers.close(id)
      })
    )
  )

  it.live("bad input is refused with where it is; an unknown or closed worker is UnknownWorker", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        for (const capacity of [0, 1.5, -1, 70_000, "8"]) {
          const error = yield* Effect.flip(Stream.runDrain(workers.events("mcpw_x", { capacity: capacity as number })))
          assert.strictEqual(error._tag, "InvalidInput")
          assert.strictEqual(error._tag === "InvalidInput" ? error.path : "", "options.capacity")
        }
        const unknown = yield* Effect.flip(Stream.runDrain(workers.events("mcpw_unknown")))
        assert.strictEqual(unknown._tag, "UnknownWorker")
        const mcp = makePromiseClient()
        const rejected = yield* Effect.promise(() =>
          mcp
            .events("mcpw_unknown")
            .next()
            .then(
              () => "resolved",
              (error: { _tag?: string }) => error._tag
            )
            .finally(() => mcp.dispose())
        )
        assert.strictEqual(rejected, "UnknownWorker")
      })
    )
  )

  it.live("notifications with nobody reading, or a reader that never reads, do not grow memory", () =>
    withHost(
      Effect.gen(function* () {
        // `gc` for this measurement only: the flag is set back at once, so that owner threads started from here on
        // run with the flags of every other test process (a V8 code cache is only accepted under the same flags).
        setFlagsFromString("--expose-gc")
        const gc = runInNewContext("gc") as () => void
        setFlagsFromString("--no-expose-gc")
        const heap = () => {
          gc()
          gc()
          return process.memoryUsage().heapUsed
        }
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        // Warm-up, then 10,000 log lines of ~200 bytes each (several MB if they were kept) with nobody subscribed.
        yield* workers.callTool(id, "flood", { count: 2_000 })
        const start = heap()
        yield* workers.callTool(id, "flood", { count: 10_000 }, { timeout: 60_000 })
        const nobody = heap() - start
        // Then the same with a subscriber that reads nothing: it keeps 16 and the rest are dropped.
        const grown = yield* Effect.scoped(
          Effect.gen(function* () {
            const pull = yield* Stream.toPull(workers.events(id, { capacity: 16 }))
            const reading = yield* Effect.fork(pull)
            yield* Effect.sleep(20)
            const before = heap()
            yield* workers.callTool(id, "flood", { count: 10_000 }, { timeout: 60_000 })
            const after = heap()
            yield* Fiber.interrupt(reading)
            return after - before
          })
        )
        const status = yield* workers.status(id)
        assert.strictEqual(status.notifications.received, 22_000)
        assert.isAtLeast(status.notifications.dropped, 10_000 - 17)
        assert.isBelow(nobody, 1024 * 1024, `heap grew by ${nobody} bytes with nobody subscribed`)
        assert.isBelow(grown, 1024 * 1024, `heap grew by ${grown} bytes with a subscriber that never reads`)
      })
    )
  )
})
