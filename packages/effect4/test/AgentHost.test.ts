// The agent-host operations of the Effect 4 face against real fixture servers (C41, C42, C69): a document opened
// entry by entry, each entry's failure this package's tagged error, declarations and tools as Effect methods whose
// failures are caught by tag, and closeAll with one confirmed cleanup each.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { statefulConfig } from "../../../test/fixtures/servers.js"
import * as McpWorkerError from "../src/McpWorkerError.js"
import { McpWorkers } from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import { carrying, freshMarker } from "./processes.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { structured } from "./scenarios.js"

const stateful = () => statefulConfig("--exit-on-stdin-eof")
const entry = remoteEntry()

describe("the Effect 4 face's agent-host operations", () => {
  it.live("openAll answers per entry with this package's errors; describe, tools and closeAll over real servers", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const opened = yield* workers.openAll(
        {
          servers: {
            good: stateful(),
            missing: { ...stateful(), env: { TOKEN: "${env:MCPW_EFFECT4_UNSET}" } },
            broken: { command: "/nonexistent/mcp-worker-effect4-server" }
          }
        },
        { environment: {}, open: { timeout: "20 seconds" } }
      )
      assert.deepStrictEqual(Object.keys(opened).sort(), ["broken", "good", "missing"])
      const good = opened.good!
      assert.strictEqual(good._tag, "Opened")
      const id = good._tag === "Opened" ? good.id : ""
      const missing = opened.missing!
      const broken = opened.broken!
      assert.isTrue(missing._tag === "Failed" && missing.error instanceof McpWorkerError.InvalidInput)
      assert.isTrue(broken._tag === "Failed" && broken.error instanceof McpWorkerError.OpenFailed)
      if (missing._tag === "Failed" && missing.error._tag === "InvalidInput") {
        assert.deepStrictEqual([missing.error.where, missing.error.delivery], ["config", "not_sent"])
        assert.include(missing.error.path, "env")
      }

      const declarations = yield* workers.describe(id, { name: "Stateful", title: "the stateful fixture" })
      assert.include(declarations, "interface Stateful")
      assert.include(declarations, "echo(")

      const tools = yield* workers.tools(id)
      assert.includeMembers(Object.keys(tools), ["echo", "sleep", "big"])
      const echoed = yield* tools.echo!({ token: "through-a-method" })
      assert.strictEqual(structured(echoed)?.token, "through-a-method")
      // A bound method fails as callTool does, caught by its tag.
      const timedOut = yield* tools.sleep!({ ms: 10_000 }, { timeout: 200 }).pipe(
        Effect.as("answered"),
        Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed(`${error.reason} ${error.delivery}`))
      )
      assert.strictEqual(timedOut, "timeout unknown")
      const unknown = yield* workers.describe("mcpw_nobody").pipe(
        Effect.as("answered"),
        Effect.catchTag("UnknownWorker", (error) => Effect.succeed(error.delivery))
      )
      assert.strictEqual(unknown, "not_sent")

      const closed = yield* workers.closeAll({ ...opened, stale: "mcpw_nobody" })
      assert.deepStrictEqual(Object.keys(closed).sort(), ["good", "stale"])
      const closedGood = closed.good!
      assert.isTrue(closedGood._tag === "Closed" && closedGood.status.cleanup?.activeProcesses === 0)
      const stale = closed.stale!
      assert.isTrue(stale._tag === "Failed" && stale.error instanceof McpWorkerError.UnknownWorker)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("from a remote thread through layerRemote: openAll, describe, tools and closeAll", () =>
    Effect.gen(function* () {
      const outcome = yield* runInThread(entry(), "agentHost", { config: stateful() })
      assert.deepStrictEqual(outcome, {
        ok: true,
        value: { opened: "Opened", missing: true, declaresEcho: true, echoed: "remote", cleanup: 0 }
      })
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("an openAll interrupted while its servers start leaves no server process", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const marker = freshMarker("ABANDONED_OPEN_ALL")
      const entry = { ...stateful(), env: { [marker]: "1" } }
      const opening = yield* Effect.forkChild(workers.openAll({ servers: { one: entry, two: entry } }))
      // Both servers exist: the entries are opening in the implementation.
      for (let i = 0; carrying(marker).length < 2; i++) {
        assert.isBelow(i, 2_000, "the servers never started")
        yield* Effect.sleep(5)
      }
      yield* Fiber.interrupt(opening)
      assert.deepStrictEqual(carrying(marker), [])
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})
