// HTTP servers through the whole library: the host registry, real owner threads, and a remote thread.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import { type HttpFixture, startHttpFixture } from "../fixtures/servers.js"
import { structured, tag } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const fixture = (...flags: Array<string>) =>
  Effect.acquireRelease(
    Effect.promise(() => startHttpFixture("http", ...flags)),
    (server: HttpFixture) => Effect.promise(() => server.stop())
  )

describe("NodeMcpWorkers over streamable HTTP", () => {
  it.scopedLive("one session reused across fibers and threads; busy, isError, ServerError; close sends DELETE", () => {
    const lines: Array<string> = []
    const logger = Logger.make(({ annotations, message }) => {
      lines.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
    })
    return Effect.gen(function* () {
      const server = yield* fixture()
      const canary = `CANARY-${tag()}`
      const workers = yield* McpWorkers
      const id = yield* workers.open({
        url: server.url,
        headers: { "x-canary": canary, authorization: `Bearer ${canary}` }
      })
      const status = yield* workers.status(id)
      assert.strictEqual(status.state, "ready")
      assert.isNull(status.pid)
      assert.isString(status.protocolVersion)
      assert.isNotNull(status.server)

      // Fibers: two calls in a row, then a race.
      assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
      const slow = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 300, token: "first" }))
      yield* Effect.sleep(50)
      const busy = yield* Effect.flip(workers.callTool(id, "echo", { token: "second" }))
      assert.strictEqual(busy._tag, "WorkerBusy")
      assert.strictEqual(structured(yield* Fiber.join(slow)).token, "first")

      // Another thread, knowing only the id, continues the same session.
      const outcome = yield* runInThread(entry(), { scenario: "inc", data: { id } })
      assert.isTrue(outcome.ok)
      if (outcome.ok) assert.strictEqual(outcome.value.count, 2)

      assert.isTrue((yield* workers.callTool(id, "fail")).isError)
      const rpc = yield* Effect.flip(workers.callTool(id, "rpc_error", { code: -32602 }))
      assert.strictEqual(rpc._tag, "ServerError")
      assert.strictEqual((yield* workers.status(id)).state, "ready")

      // Timeout: the server sees the cancel for exactly that request.
      const timedOut = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 5000, token: "slow" }, { timeout: 150 }))
      assert.strictEqual(timedOut._tag, "DeliveryUnknown")
      assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "after" })).token, "after")
      const log = yield* Effect.promise(() => server.log())
      const slowCall = log.calls.filter((call) => call.token === "slow")
      assert.strictEqual(slowCall.length, 1)
      assert.deepStrictEqual(
        log.cancelled.map((entry) => entry.requestId),
        [slowCall[0]!.id]
      )
      assert.isFalse(log.calls.some((call) => call.token === "second"))
      // One session for everything: no re-initialize anywhere.
      assert.strictEqual(new Set(log.calls.map((call) => call.sessionId)).size, 1)
      assert.isTrue(log.headers.every((record) => record.canary === canary))

      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.sessionTerminated, true)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      const after = yield* Effect.promise(() => server.log())
      assert.strictEqual(after.deletes.length, 1)
      assert.strictEqual(after.deletes[0]!.status, 200)

      for (const text of [JSON.stringify(status), JSON.stringify(closed), busy.message, rpc.message, ...lines]) {
        assert.notInclude(text, canary)
      }
    }).pipe(Effect.provide(NodeMcpWorkers.layer()), Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  })

  it.scopedLive("an expired session fails the worker (never re-initialized); close still succeeds", () =>
    Effect.gen(function* () {
      const server = yield* fixture()
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url })
      yield* workers.callTool(id, "inc")
      yield* Effect.promise(() => server.expire())
      const error = yield* Effect.flip(workers.callTool(id, "inc"))
      assert.strictEqual(error._tag, "WorkerFailed")
      if (error._tag === "WorkerFailed") assert.strictEqual(error.kind, "session_expired")
      const status = yield* workers.status(id)
      assert.strictEqual(status.state, "failed")
      const later = yield* Effect.flip(workers.callTool(id, "inc"))
      assert.strictEqual(later._tag, "WorkerFailed")
      if (later._tag === "WorkerFailed") assert.strictEqual(later.delivery, "not_sent")
      const log = yield* Effect.promise(() => server.log())
      assert.strictEqual(log.sessions.length, 1)
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.state, "closed")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("a DELETE answered 405 is tolerated: sessionTerminated false, close succeeds", () =>
    Effect.gen(function* () {
      const server = yield* fixture("--no-delete")
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url: server.url, transport: "streamable-http" })
      yield* workers.callTool(id, "inc")
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.sessionTerminated, false)
      assert.strictEqual((yield* Effect.promise(() => server.log())).deletes[0]?.status, 405)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("legacy SSE, with and without an explicit transport, through owner threads", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("sse")),
        (s) => Effect.promise(() => s.stop())
      )
      const workers = yield* McpWorkers
      for (const config of [{ url: server.url, transport: "sse" as const }, { url: server.url }]) {
        const id = yield* workers.open(config)
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 1)
        const closed = yield* workers.close(id)
        assert.isNull(closed.cleanup?.sessionTerminated)
      }
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})
