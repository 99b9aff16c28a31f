// The request operations of the table beyond tools (resources, templates, prompts, completions, ping), one
// behaviour suite run against the host service, the Promise client in the host's thread, and the Promise client
// in a remote thread; plus the rules every request shares.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { statefulConfig } from "../fixtures/servers.js"
import { structured, withHost, withPromiseClient } from "./helpers.js"

const textOf = (result: { content?: unknown }): string =>
  ((result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? "") as string
import { exercise, exerciseProgress, expected, expectedProgress, type Surface } from "./operationsSuite.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

describe("C29: request operations beyond tools, and progress", () => {
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
        const seen = yield* withPromiseClient(async (mcp) => [await exercise(mcp, id), await exerciseProgress(mcp, id)])
        assert.deepStrictEqual(seen, [expected, expectedProgress])
      })
    )
  )

  it.live("the Promise client in a remote thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const outcome = yield* runInThread(entry(), { scenario: "operations", data: { id } })
        assert.isTrue(outcome.ok, JSON.stringify(outcome.ok ? null : outcome.error))
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
        // A 1 ms budget: answered in time on a fast machine, else not sent or timed out, never anything else.
        const short = yield* Effect.either(workers.readResource(id, "memo://count", { timeout: "1 millis" }))
        if (short._tag === "Left") assert.oneOf(short.left._tag, ["DeliveryUnknown", "DeadlineExceeded"])
        assert.deepStrictEqual(yield* workers.ping(id), {})
      })
    )
  )
})

describe("C31: server requests: elicitation, sampling and roots answered by the host's handlers", () => {
  const handlers: NodeMcpWorkers.Handlers = {
    elicitation: (request) =>
      Effect.succeed({ action: "accept", content: { name: `answered for ${request.workerId.slice(0, 5)}` } }),
    sampling: () => Effect.succeed({ role: "assistant", content: { type: "text", text: "hi" }, model: "test-model" }),
    roots: () => Effect.succeed({ roots: [{ uri: "file:///tmp/project", name: "project" }] })
  }

  it.live("each handler answers, even for a call made from a remote thread; capabilities follow the handlers", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const capabilities = structured(yield* workers.callTool(id, "capabilities")).capabilities
      assert.deepStrictEqual(Object.keys(capabilities).sort(), ["elicitation", "roots", "sampling"])
      const elicited = structured(yield* workers.callTool(id, "ask", { kind: "elicit" })).answer
      // The handler left out `color`: the client applied the schema's default before answering the server.
      assert.deepStrictEqual(elicited, { action: "accept", content: { name: "answered for mcpw_", color: "blue" } })
      const sampled = structured(yield* workers.callTool(id, "ask", { kind: "sample" })).answer
      assert.strictEqual(sampled.content.text, "hi")
      const roots = structured(yield* workers.callTool(id, "ask", { kind: "roots" })).answer
      assert.deepStrictEqual(roots.roots, [{ uri: "file:///tmp/project", name: "project" }])
      // The call that made the server ask came from a remote thread: the host's handler still answers it.
      const outcome = yield* runInThread(entry(), { scenario: "ask", data: { id } })
      assert.isTrue(outcome.ok)
      assert.strictEqual(outcome.ok ? outcome.value.action : null, "accept")
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ handlers })))
  )

  it.live("a handler that fails or dies answers the server with an error; the worker stays ready", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const failed = yield* workers.callTool(id, "ask", { kind: "elicit" })
      assert.isTrue(failed.isError)
      assert.include(textOf(failed), "handler failed")
      const died = yield* workers.callTool(id, "ask", { kind: "sample" })
      assert.isTrue(died.isError)
      assert.strictEqual((yield* workers.status(id)).state, "ready")
      assert.deepStrictEqual(yield* workers.ping(id), {})
    }).pipe(
      Effect.provide(
        NodeMcpWorkers.layer({
          handlers: { elicitation: () => Effect.fail("no user here"), sampling: () => Effect.die("bug") }
        })
      )
    )
  )

  it.live("without handlers the client declares no such capability and the server is told the method is unknown", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        assert.deepStrictEqual(structured(yield* workers.callTool(id, "capabilities")).capabilities, {})
        const refused = yield* workers.callTool(id, "ask", { kind: "roots" })
        assert.isTrue(refused.isError)
      })
    )
  )
})
