// Core's operations, options and errors through the Effect 4 face, against real servers (C69): the service has every
// operation the implementation offers, `onTooLarge` spills as on Effect 3, a modern server's bounded rounds and
// unusable answers and a broken response stream are typed failures caught by tag, and an `open` its caller gave up
// leaves no server behind.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { modernConfig, startHttpFixture, statefulConfig } from "../../../test/fixtures/servers.js"
import * as Implementation from "../src/internal/implementation.js"
import { McpWorkers } from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import { carrying, freshMarker } from "./processes.js"

const stateful = () => statefulConfig("--exit-on-stdin-eof")

const handlers: NodeMcpWorkers.Handlers = {
  elicitation: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }),
  sampling: () => Effect.succeed({ role: "assistant", content: { type: "text", text: "hi" }, model: "test-model" }),
  roots: () => Effect.succeed({ roots: [{ uri: "file:///tmp/project", name: "project" }] })
}

const freshDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-effect4-spill-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe("core's operations, options and errors on Effect 4 (C69)", () => {
  it.live("the service offers every operation of the implementation's surfaces", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      // A client starts nothing until its first call; its keys are the Promise surfaces' operations.
      const client = yield* Effect.acquireRelease(
        Effect.promise(() => Implementation.load().then((implementation) => implementation.makePromiseClient())),
        (client) => Effect.promise(() => client.dispose())
      )
      const operations = Object.keys(client).filter((key) => key !== "dispose")
      assert.includeMembers(operations, ["openAll", "closeAll", "describe", "tools", "callTool", "events"])
      assert.deepStrictEqual(Object.keys(workers).sort(), operations.sort())
      for (const name of operations) assert.isFunction((workers as unknown as Record<string, unknown>)[name], name)
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live('onTooLarge of open spills a result over maxResultBytes; a call\'s own "fail" is ResultTooLarge', () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const dir = yield* freshDir
      const id = yield* workers.open({ ...stateful(), maxResultBytes: 4000 }, { onTooLarge: { spill: dir } })
      const spilled = yield* workers.callTool(id, "big", { bytes: 5000 })
      assert.strictEqual(spilled.spilled, true)
      assert.strictEqual(spilled.limit, 4000)
      const file = String(spilled.path)
      assert.strictEqual(path.dirname(file), dir)
      assert.include(fs.readFileSync(file, "utf8"), "x".repeat(5000))
      const failed = yield* workers.callTool(id, "big", { bytes: 5000 }, { onTooLarge: "fail" }).pipe(
        Effect.as("answered"),
        Effect.catchTag("ResultTooLarge", (error) =>
          Effect.succeed({ limit: error.limit, delivery: error.delivery, spillFailed: error.spillFailed })
        )
      )
      assert.deepStrictEqual(failed, { limit: 4000, delivery: "unknown", spillFailed: undefined })
      assert.strictEqual(fs.readdirSync(dir).length, 1)
      // A spill directory that cannot be one is refused before anything starts, with its path.
      const refused = yield* workers.open(stateful(), { onTooLarge: { spill: "relative/dir" } }).pipe(
        Effect.as("opened"),
        Effect.catchTag("InvalidInput", (error) => Effect.succeed([error.where, error.path, error.delivery]))
      )
      assert.deepStrictEqual(refused, ["config", "options.onTooLarge.spill", "not_sent"])
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("InputRoundsExceeded and UnusableResult are typed failures, caught by tag", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ ...modernConfig("--exit-on-stdin-eof"), maxInputRounds: 2 })
      const exceeded = yield* workers.callTool(id, "ask_forever").pipe(
        Effect.as("answered"),
        Effect.catchTag("InputRoundsExceeded", (error) => Effect.succeed([error.rounds, error.delivery]))
      )
      assert.deepStrictEqual(exceeded, [2, "unknown"])
      const unusable = yield* workers.callTool(id, "bad_result_type").pipe(
        Effect.as("answered"),
        Effect.catchTag("UnusableResult", (error) => Effect.succeed([error.reason, error.delivery]))
      )
      assert.deepStrictEqual(unusable, ["unknown_result_type", "unknown"])
      assert.strictEqual((yield* workers.status(id)).era, "modern")
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers })))
  )

  it.live("a broken response stream is DeliveryUnknown { reason: stream_broken }, caught by tag", () =>
    Effect.gen(function* () {
      const fixture = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("modern-http")),
        (fixture) => Effect.promise(() => fixture.stop())
      )
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: fixture.url })
      const broken = yield* workers.callTool(id, "exit", { delayMs: 100 }, { timeout: 10_000 }).pipe(
        Effect.as("answered"),
        Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed([error.reason, error.delivery]))
      )
      assert.deepStrictEqual(broken, ["stream_broken", "unknown"])
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("an open interrupted while its server starts leaves no server process", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const marker = freshMarker("ABANDONED_OPEN")
      const opening = yield* Effect.forkChild(workers.open({ ...stateful(), env: { [marker]: "1" } }))
      // The server process exists: the open is under way in the implementation.
      for (let i = 0; carrying(marker).length === 0; i++) {
        assert.isBelow(i, 2_000, "the server never started")
        yield* Effect.sleep(5)
      }
      yield* Fiber.interrupt(opening)
      assert.deepStrictEqual(carrying(marker), [])
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})
