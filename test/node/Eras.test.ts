// Both protocol eras through the library (C51–C57): the modern fixtures (v2 server SDK, 2026-07-28 only) over stdio
// and Streamable HTTP, their multi-round-trip calls as one call of a worker, the bounded rounds and the answers a
// client cannot use, and what a worker without sessions is. The request rules of every surface run in both eras in
// Behaviour.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { modernConfig, startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import { structured } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const handlers: NodeMcpWorkers.Handlers = {
  elicitation: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }),
  sampling: () => Effect.succeed({ role: "assistant", content: { type: "text", text: "hi" }, model: "test-model" }),
  roots: () => Effect.succeed({ roots: [{ uri: "file:///tmp/project", name: "project" }] })
}

const modern = () => modernConfig("--exit-on-stdin-eof")

const failureOf = <A, E>(effect: Effect.Effect<A, E, McpWorkers>) =>
  Effect.flip(effect).pipe(Effect.map((error) => error as unknown as Record<string, unknown>))

const rounds = (id: string, name: string) =>
  Effect.flatMap(McpWorkers, (workers) => workers.callTool(id, "calls")).pipe(
    Effect.map(
      (result) =>
        (structured(result).rounds as Array<{ name: string; hasInputResponses: boolean }>).filter(
          (round) => round.name === name
        ).length
    )
  )

describe("C51: the era a worker speaks", () => {
  it.live("auto reaches a 1.x server over initialize and a modern one over server/discover; pins hold", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const legacy = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const modernId = yield* workers.open(modern())
      const pinnedLegacy = yield* workers.open({
        ...modernConfig("--exit-on-stdin-eof", "--serve-legacy"),
        protocol: "legacy"
      })
      const legacyStatus = yield* workers.status(legacy)
      const modernStatus = yield* workers.status(modernId)
      assert.deepStrictEqual([legacyStatus.era, legacyStatus.protocolVersion], ["legacy", "2025-11-25"])
      assert.deepStrictEqual([modernStatus.era, modernStatus.protocolVersion], ["modern", "2026-07-28"])
      assert.deepStrictEqual(modernStatus.server, { name: "modern-fixture", version: "2.0.0" })
      assert.strictEqual((yield* workers.status(pinnedLegacy)).era, "legacy")
      // No ping in 2026-07-28: a modern worker's ping is a server/discover, answered all the same.
      assert.deepStrictEqual(yield* workers.ping(modernId), {})
      // A pin the server does not offer fails the open, leaving nothing.
      const refused = yield* failureOf(
        workers.open({ ...statefulConfig("--exit-on-stdin-eof"), protocol: "2026-07-28" })
      )
      assert.strictEqual(refused._tag, "OpenFailed")
      assert.strictEqual(refused.stage, "initialize")
      const bad = yield* failureOf(workers.open({ ...modern(), protocol: "2027" as never }))
      assert.deepStrictEqual([bad._tag, bad.path], ["InvalidInput", "config.protocol"])
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})

describe("C52, C53: a multi-round-trip exchange is one call", () => {
  it.live("each round is answered by the host's handlers, from the host and from a remote thread", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(modern())
      const elicited = structured(yield* workers.callTool(id, "ask", { kind: "elicit" })).answer
      // The handler left out `color`: the client applied the schema's default, as for a legacy server's request.
      assert.deepStrictEqual(elicited, { action: "accept", content: { name: "Ada", color: "blue" } })
      assert.strictEqual(structured(yield* workers.callTool(id, "ask", { kind: "sample" })).answer.content.text, "hi")
      assert.deepStrictEqual(structured(yield* workers.callTool(id, "ask", { kind: "roots" })).answer.roots, [
        { uri: "file:///tmp/project", name: "project" }
      ])
      assert.strictEqual(structured(yield* workers.callTool(id, "ask_rounds", { rounds: 3 })).rounds, 3)
      assert.strictEqual(yield* rounds(id, "ask_rounds"), 4)
      const outcome = yield* runInThread(entry(), { scenario: "ask", data: { id } })
      assert.isTrue(outcome.ok, outcome.ok ? "" : String(outcome.error))
      assert.strictEqual(outcome.ok ? outcome.value.action : null, "accept")
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers })))
  )

  it.live("one busy slot and one requestId across rounds; one cancel ends the whole exchange", () =>
    Effect.gen(function* () {
      const asked = yield* Deferred.make<void>()
      const never = yield* Deferred.make<never>()
      const slow: NodeMcpWorkers.Handlers = {
        elicitation: () => Deferred.succeed(asked, undefined).pipe(Effect.zipRight(Deferred.await(never)))
      }
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(modern())
        const call = yield* Effect.fork(Effect.either(workers.callTool(id, "ask_rounds", { rounds: 2 })))
        yield* Deferred.await(asked)
        const during = yield* workers.status(id)
        assert.isTrue(during.busy)
        const busy = yield* failureOf(workers.callTool(id, "echo", { token: "x" }))
        assert.deepStrictEqual([busy._tag, busy.requestId], ["WorkerBusy", during.requestId])
        yield* workers.cancel(id, during.requestId!)
        const ended = yield* Fiber.join(call)
        assert.isTrue(ended._tag === "Left")
        const error = (ended as unknown as { left: Record<string, unknown> }).left
        assert.deepStrictEqual(
          [error._tag, error.reason, error.requestId],
          ["DeliveryUnknown", "cancelled", during.requestId]
        )
        // Nothing more of that call reached the server: its first round only.
        assert.strictEqual(yield* rounds(id, "ask_rounds"), 1)
        assert.strictEqual((yield* workers.status(id)).state, "ready")
      }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers: slow })))
    })
  )

  it.live("rounds are bounded (default 8, configurable); unusable answers end the call; nothing is retried", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(modern())
      const exceeded = yield* failureOf(workers.callTool(id, "ask_forever"))
      assert.deepStrictEqual([exceeded._tag, exceeded.rounds, exceeded.delivery], ["InputRoundsExceeded", 8, "unknown"])
      assert.strictEqual(yield* rounds(id, "ask_forever"), 9)
      const unknown = yield* failureOf(workers.callTool(id, "bad_result_type"))
      assert.deepStrictEqual([unknown._tag, unknown.reason], ["UnusableResult", "unknown_result_type"])
      const malformed = yield* failureOf(workers.callTool(id, "bad_input_requests"))
      assert.deepStrictEqual([malformed._tag, malformed.reason], ["UnusableResult", "malformed_input_required"])
      // The server refuses the retry's requestState: its error ends the call after the one retry.
      const tampered = yield* failureOf(workers.callTool(id, "reject_state"))
      assert.deepStrictEqual([tampered._tag, tampered.code], ["ServerError", -32602])
      assert.strictEqual(yield* rounds(id, "reject_state"), 2)
      assert.strictEqual((yield* workers.status(id)).state, "ready")

      const strict = yield* workers.open({ ...modern(), maxInputRounds: 2 })
      const two = yield* failureOf(workers.callTool(strict, "ask_forever"))
      assert.deepStrictEqual([two._tag, two.rounds], ["InputRoundsExceeded", 2])
      assert.strictEqual(yield* rounds(strict, "ask_forever"), 3)
      const bad = yield* failureOf(workers.open({ ...modern(), maxInputRounds: 0 }))
      assert.deepStrictEqual([bad._tag, bad.path], ["InvalidInput", "config.maxInputRounds"])
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers })))
  )

  it.live("without a handler the client declares no capability, and the server refuses the call itself", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(modern())
      assert.deepStrictEqual(structured(yield* workers.callTool(id, "capabilities")).capabilities, {})
      const refused = yield* failureOf(workers.callTool(id, "ask", { kind: "elicit" }))
      assert.strictEqual(refused._tag, "ServerError")
      assert.strictEqual((yield* workers.status(id)).state, "ready")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})

describe("C54–C57: a modern Streamable HTTP worker", () => {
  it.live(
    "no session: state through handles, cancel closes the stream, close sends no DELETE, events over listen",
    () =>
      Effect.gen(function* () {
        const fixture = yield* Effect.acquireRelease(
          Effect.promise(() => startHttpFixture("modern-http")),
          (fixture) => Effect.promise(() => fixture.stop())
        )
        const workers = yield* McpWorkers
        const id = yield* workers.open({ url: fixture.url })
        assert.strictEqual((yield* workers.status(id)).era, "modern")
        const { handle } = structured(yield* workers.callTool(id, "counter"))
        yield* workers.callTool(id, "inc", { handle })
        assert.strictEqual(structured(yield* workers.callTool(id, "inc", { handle, by: 2 })).count, 3)
        const timedOut = yield* failureOf(workers.callTool(id, "sleep", { ms: 10_000, token: "t" }, { timeout: 300 }))
        assert.deepStrictEqual([timedOut._tag, timedOut.reason], ["DeliveryUnknown", "timeout"])
        let log = (yield* Effect.promise(() => fixture.log())) as unknown as {
          cancelled: Array<{ reason: string }>
          deletes: Array<unknown>
          headers: Array<{ sessionId: string | null }>
        }
        for (let i = 0; i < 50 && log.cancelled.length === 0; i++) {
          yield* Effect.sleep(20)
          log = (yield* Effect.promise(() => fixture.log())) as unknown as typeof log
        }
        assert.deepStrictEqual(
          log.cancelled.map((c) => c.reason),
          ["response stream closed"]
        )

        // A 2026-07-28 server says nothing unasked: its list changes come on the listen stream the owner opened.
        const first = yield* Effect.fork(Stream.runHead(workers.events(id)))
        let event = yield* Fiber.poll(first)
        for (let i = 0; i < 50 && event._tag === "None"; i++) {
          yield* workers.callTool(id, "notify", { methods: ["notifications/tools/list_changed"] })
          yield* Effect.sleep(50)
          event = yield* Fiber.poll(first)
        }
        const got = yield* Fiber.join(first)
        assert.strictEqual(got._tag === "Some" ? got.value.method : null, "notifications/tools/list_changed")
        assert.isAtLeast((yield* workers.status(id)).notifications.received, 1)

        const closed = yield* workers.close(id)
        assert.strictEqual(closed.cleanup?.sessionTerminated, null)
        log = (yield* Effect.promise(() => fixture.log())) as unknown as typeof log
        assert.deepStrictEqual(log.deletes, [])
        assert.isTrue(log.headers.every((h) => h.sessionId === null))
      }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("C54: a request whose exchange breaks is DeliveryUnknown and never sent again", () =>
    Effect.gen(function* () {
      const fixture = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("modern-http")),
        (fixture) => Effect.promise(() => fixture.stop())
      )
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: fixture.url })
      const broken = yield* failureOf(workers.callTool(id, "exit", { delayMs: 100 }, { timeout: 10_000 }))
      assert.deepStrictEqual(
        [broken._tag, broken.reason, broken.delivery],
        ["DeliveryUnknown", "stream_broken", "unknown"]
      )
      // One request lost, not the worker: there is no session that could have died with it.
      assert.strictEqual((yield* workers.status(id)).state, "ready")
    }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
  )
})
