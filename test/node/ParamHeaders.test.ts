// C62: SEP-2243's tool parameters in headers on a 2026-07-28 Streamable HTTP worker. The modern HTTP fixture's SDK
// entry checks every Mcp-Param-* header against the body before its handler runs, and logs what arrived; the same
// tools over stdio carry no headers and exclude nothing.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { type HttpFixture, modernConfig, startHttpFixture } from "../fixtures/servers.js"
import { structured } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const failureOf = <A, E>(effect: Effect.Effect<A, E, McpWorkers>) =>
  Effect.flip(effect).pipe(Effect.map((error) => error as unknown as Record<string, unknown>))

const fixture = Effect.acquireRelease(
  Effect.promise(() => startHttpFixture("modern-http")),
  (fixture) => Effect.promise(() => fixture.stop())
)

interface Log {
  readonly headers: ReadonlyArray<{ readonly mcpMethod: string | null; readonly params: Record<string, string> }>
}

const logOf = (fixture: HttpFixture) => Effect.promise(() => fixture.log() as unknown as Promise<Log>)

// The Mcp-Param-* headers of the last tools/call that reached the server.
const lastCallHeaders = (log: Log) => log.headers.filter((h) => h.mcpMethod === "tools/call").at(-1)?.params

const base64 = (value: string) => `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`

describe("C62: tool parameters in headers (SEP-2243)", () => {
  it.live("a listed tool's declared parameters are mirrored and encoded; an invalid one is left out and refused", () =>
    Effect.gen(function* () {
      const server = yield* fixture
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url })

      // Not listed yet: the call goes without headers, the server refuses it unrun, and it is not sent again.
      const unlisted = yield* failureOf(workers.callTool(id, "headed", { region: "eu" }))
      assert.deepStrictEqual([unlisted._tag, unlisted.code], ["ServerError", -32020])
      assert.strictEqual((yield* logOf(server)).headers.filter((h) => h.mcpMethod === "tools/call").length, 1)

      const { tools } = yield* workers.listTools(id)
      const names = tools.map((tool) => tool.name)
      assert.include(names, "headed")
      assert.notInclude(names, "misdeclared")

      const args = { region: "Zürich ", priority: 7, flag: false, note: "not mirrored" }
      // The first run of the tool: the refused call never reached it.
      assert.deepStrictEqual(structured(yield* workers.callTool(id, "headed", args)), { arguments: args, runs: 1 })
      assert.deepStrictEqual(lastCallHeaders(yield* logOf(server)), {
        "mcp-param-region": base64("Zürich "),
        "mcp-param-priority": "7",
        "mcp-param-flag": "false"
      })
      // Absent parameters send no header; plain ASCII goes as it is.
      yield* workers.callTool(id, "headed", { region: "us-west1" })
      assert.deepStrictEqual(lastCallHeaders(yield* logOf(server)), { "mcp-param-region": "us-west1" })

      // The excluded tool is never called: refused before anything is written.
      const sentBefore = (yield* logOf(server)).headers.length
      const refused = yield* failureOf(workers.callTool(id, "misdeclared", { score: 1.5 }))
      assert.deepStrictEqual([refused._tag, refused.path, refused.delivery], ["InvalidInput", "name", "not_sent"])
      assert.strictEqual((yield* logOf(server)).headers.length, sentBefore)

      // The same from a remote thread, whose calls the owner takes directly.
      const remote = yield* runInThread(entry(), { scenario: "paramHeaders", data: { id } })
      assert.isTrue(remote.ok, remote.ok ? "" : String(remote.error))
      const value = remote.ok ? (remote.value as Record<string, any>) : {}
      assert.notInclude(value.names, "misdeclared")
      assert.deepStrictEqual(value.called.arguments, { region: "remote thread", priority: -3 })
      assert.deepStrictEqual(lastCallHeaders(yield* logOf(server)), {
        "mcp-param-region": "remote thread",
        "mcp-param-priority": "-3"
      })
      assert.strictEqual(value.refused._tag, "InvalidInput")
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("the tools' list_changed forgets what they declared, until they are listed again", () =>
    Effect.gen(function* () {
      const server = yield* fixture
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url })
      yield* workers.listTools(id)
      yield* workers.callTool(id, "headed", { region: "eu" })
      // The owner reads the notification before the host hands it on: once the event is here, the owner forgot.
      const changed = yield* Effect.fork(
        Stream.runHead(Stream.filter(workers.events(id), (e) => e.method === "notifications/tools/list_changed"))
      )
      // Told again until the subscription, which starts on its own time, hears one.
      let heard = yield* Fiber.poll(changed)
      let told = 0
      for (; told < 100 && heard._tag === "None"; told++) {
        yield* workers.callTool(id, "notify", { methods: ["notifications/tools/list_changed"] })
        yield* Effect.sleep(50)
        heard = yield* Fiber.poll(changed)
      }
      assert.strictEqual(heard._tag, "Some")
      // Every change told has arrived, so none comes after the list below.
      for (let i = 0; i < 200 && (yield* workers.status(id)).notifications.received < told; i++) yield* Effect.sleep(25)
      const stale = yield* failureOf(workers.callTool(id, "headed", { region: "eu" }))
      assert.deepStrictEqual([stale._tag, stale.code], ["ServerError", -32020])
      yield* workers.listTools(id)
      assert.strictEqual(structured(yield* workers.callTool(id, "headed", { region: "eu" })).arguments.region, "eu")
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("over stdio nothing travels in headers, so nothing is left out", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(modernConfig("--exit-on-stdin-eof"))
      assert.strictEqual((yield* workers.status(id)).era, "modern")
      const { tools } = yield* workers.listTools(id)
      assert.includeMembers(
        tools.map((tool) => tool.name),
        ["headed", "misdeclared"]
      )
      const result = yield* workers.callTool(id, "misdeclared", { score: 1.5 })
      assert.strictEqual(result.content[0]?.type === "text" ? result.content[0].text : null, "1.5")
      assert.strictEqual(structured(yield* workers.callTool(id, "headed", { region: "eu" })).arguments.region, "eu")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})
