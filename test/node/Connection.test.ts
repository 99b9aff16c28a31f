import { assert, describe, it } from "@effect/vitest"
import { CloseFailed, type CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Connection from "../../packages/node/src/internal/shared/connection.js"

const make = (): Connection.Connection => ({
  workerId: "mcpw_test",
  marker: "marker",
  http: false,
  life: Connection.opening,
  pending: undefined,
  pid: null,
  era: null,
  protocolVersion: null,
  server: null,
  notifications: Connection.counters()
})

const cleanup = (activeProcesses: number): CleanupSummary => ({
  activeProcesses,
  signalled: { term: 1, kill: 0 },
  escaped: 0,
  durationMs: 1,
  sessionTerminated: null
})

const noThread = { threadId: null, ownerPid: null }
const status = (connection: Connection.Connection) => Connection.statusOf(connection, noThread)
const done = () => Effect.runSync(Deferred.make<WorkerStatus, CloseFailed>())

describe("a connection's life (host and McpClient alike)", () => {
  it("a failure is recorded once, on a ready connection, also while it closes", () => {
    const connection = make()
    assert.isFalse(Connection.markFailed(connection, "transport", "not yet open"))
    assert.strictEqual(status(connection).state, "opening")
    connection.life = Connection.ready
    assert.isTrue(Connection.markFailed(connection, "transport", "gone", "2026-01-01T00:00:00.000Z"))
    assert.isFalse(Connection.markFailed(connection, "thread", "later"))
    assert.deepStrictEqual(status(connection).lastFailure, {
      kind: "transport",
      message: "gone",
      at: "2026-01-01T00:00:00.000Z"
    })

    const closing = make()
    closing.life = Connection.ready
    assert.isDefined(Connection.beginClose(closing, done()))
    assert.strictEqual(status(closing).state, "ready", "status shows the state the close began in")
    assert.isTrue(Connection.markFailed(closing, "closing", "survivors"))
    assert.strictEqual(status(closing).state, "failed")
    assert.strictEqual(closing.life._tag, "Closing")
  })

  it("a close that cannot confirm leaves the connection failed with its cleanup; a confirmed one, closed", () => {
    const connection = make()
    connection.life = Connection.ready
    assert.isUndefined(Connection.refusal(connection, "closing"))
    Connection.beginClose(connection, done())
    assert.isUndefined(Connection.beginClose(connection, done()), "a second close joins the first")
    assert.strictEqual(Connection.refusal(connection, "the worker is closing")?._tag, "WorkerFailed")
    assert.isTrue(Connection.isEnded(connection.life) === false, "subscriptions run on while a ready worker closes")
    Connection.markFailed(connection, "closing", "1 process left")
    Connection.recordCleanup(connection, cleanup(1))
    Connection.endClose(connection)
    assert.strictEqual(connection.life._tag, "Failed")
    assert.strictEqual(status(connection).cleanup?.activeProcesses, 1)
    assert.isTrue(Connection.isEnded(connection.life))

    Connection.beginClose(connection, done())
    Connection.closed(connection, cleanup(0))
    const closed = status(connection)
    assert.strictEqual(closed.state, "closed")
    assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    assert.strictEqual(closed.lastFailure?.message, "1 process left", "the failure is kept through the close")
    assert.isUndefined(Connection.beginClose(connection, done()), "nothing is left to close")
    const refused = Connection.refusal(connection, "the client is closed")
    assert.strictEqual(refused?._tag === "WorkerFailed" ? refused.kind : undefined, "closing")
  })

  it("impossible combinations do not type-check", () => {
    const failure: Connection.Failure = { kind: "transport", message: "gone", at: "now" }
    const lives: Array<Connection.Life> = [
      // @ts-expect-error a ready connection carries no failure
      { _tag: "Ready", failure },
      // @ts-expect-error a close begins from ready or failed, never from closed
      { _tag: "Closing", from: { _tag: "Closed", failure: null, cleanup: null }, done: done() },
      // @ts-expect-error a failed connection says why
      { _tag: "Failed", cleanup: null }
    ]
    assert.strictEqual(lives.length, 3)
  })
})
