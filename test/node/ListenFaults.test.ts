// The listener under faults: a sandbox killed mid-call, a host stalled past the ack window, the host closing with
// calls in flight, and bad bytes on the socket. Clauses: docs/contract.md C46, C47.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { spawn } from "node:child_process"
import * as net from "node:net"
import { createInterface } from "node:readline"
import { statefulConfig } from "../fixtures/servers.js"
import { eventually, structured } from "./helpers.js"
import { scopedSandbox, socketPath, stall } from "./listenSandbox.js"

const listening = (options: Partial<NodeMcpWorkers.ListenOptions> = {}) =>
  Effect.gen(function* () {
    const socket = socketPath()
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(NodeMcpWorkers.layerListen({ path: socket.path, ...options }), scope)
    yield* Effect.addFinalizer(() =>
      Effect.andThen(Scope.close(scope, Exit.void), () => fs.rmSync(socket.dir, { recursive: true, force: true }))
    )
    return {
      socket,
      scope,
      workers: context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"],
      grants: context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
    }
  })

const sandbox = scopedSandbox

const fds = () => fs.readdirSync("/proc/self/fd").length

describe("listener faults", () => {
  it.scopedLive(
    "C46: a sandbox SIGKILLed mid-call frees the worker at once; its request is cancelled at the server",
    () =>
      Effect.gen(function* () {
        const { socket, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const doomed = yield* sandbox(socket.path)
        void doomed.post("callTool", [grant, "sleep", { ms: 30_000, token: "doomed" }])
        yield* Effect.promise(() =>
          eventually(() => Effect.runSync(Effect.orDie(workers.status(id))).busy, 5_000).then((busy) =>
            assert.isTrue(busy)
          )
        )
        const killedAt = Date.now()
        doomed.child.kill("SIGKILL")
        const freed = yield* Effect.promise(() =>
          eventually(() => !Effect.runSync(Effect.orDie(workers.status(id))).busy, 2_000)
        )
        assert.isTrue(freed, "the worker is free once the sandbox's connection closed")
        assert.isBelow(Date.now() - killedAt, 1_000)
        const cancelled = structured(yield* workers.callTool(id, "cancelled"))
        assert.strictEqual(cancelled.cancelled.length, 1, "the server got notifications/cancelled for that request")
        // Another sandbox goes on.
        const next = yield* sandbox(socket.path)
        const outcome = yield* Effect.promise(() => next.run("callTool", [grant, "inc", {}]))
        assert.strictEqual(outcome.value.structuredContent.count, 1)
      })
  )

  it.scopedLive(
    "C46: a host stalled past the ack window: a request not yet written is not sent; one written is DeliveryUnknown and cancelled",
    () =>
      Effect.gen(function* () {
        const { socket, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const box = yield* sandbox(socket.path)
        assert.isTrue((yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))).ok)
        // Not heard from for longer than 1.5 s: the client proves the host alive first, and it cannot.
        yield* Effect.sleep("1700 millis")
        const unsent = box.post("callTool", [grant, "inc", {}])
        stall(2_000)
        const first = yield* Effect.promise(() => unsent)
        assert.strictEqual(first.error?._tag, "HostUnavailable", JSON.stringify(first))
        assert.strictEqual(first.error?.delivery, "not_sent")
        // Heard from a moment ago: the request is written at once, then the host falls silent.
        assert.isTrue((yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))).ok)
        const written = box.post("callTool", [grant, "sleep", { ms: 200, token: "stalled" }])
        stall(4_000)
        const second = yield* Effect.promise(() => written)
        assert.strictEqual(second.error?._tag, "DeliveryUnknown", JSON.stringify(second))
        assert.strictEqual(second.error?.reason, "host_unresponsive")
        // What the server executed agrees: two increments (the unsent one never arrived); the worker is free again.
        const count = yield* Effect.promise(() => box.run("callTool", [grant, "inc", { by: 0 }]))
        assert.strictEqual(count.value.structuredContent.count, 2)
        assert.isFalse((yield* workers.status(id)).busy)
      }),
    30_000
  )

  it.scopedLive("C47: the host closing answers every socket caller in flight and removes the socket file", () =>
    Effect.gen(function* () {
      const { socket, scope, workers, grants } = yield* listening()
      const id = yield* workers.open(statefulConfig())
      const other = yield* workers.open(statefulConfig())
      const box = yield* sandbox(socket.path)
      const calls = [
        box.post("callTool", [yield* grants.grant(id), "sleep", { ms: 20_000 }]),
        box.post("callTool", [yield* grants.grant(other), "sleep", { ms: 20_000 }])
      ]
      // Both in flight: two requests made at once are not written in any promised order.
      const busy = (worker: string) => Effect.runSync(Effect.orDie(workers.status(worker))).busy
      yield* Effect.promise(() => eventually(() => busy(id) && busy(other), 5_000))
      yield* Scope.close(scope, Exit.void)
      const outcomes = yield* Effect.promise(() => Promise.all(calls))
      for (const outcome of outcomes) {
        assert.isFalse(outcome.ok)
        assert.strictEqual(outcome.error?.delivery ?? "unknown", "unknown", JSON.stringify(outcome))
      }
      assert.isFalse(fs.existsSync(socket.path))
      const after = yield* Effect.promise(() => box.run("ping", ["mcpg_x"]))
      assert.strictEqual(after.error?._tag, "HostUnavailable")
      assert.strictEqual(after.error?.delivery, "not_sent")
    })
  )

  it.scopedLive("C47: SIGTERM to a host process answers the socket caller in flight and removes the socket file", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const host = spawn(process.execPath, ["--import", "tsx", "test/fixtures/listen-host.ts", socket.path], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => host.kill("SIGKILL")))
      const exited = new Promise<number | null>((resolve) => host.once("exit", (code) => resolve(code)))
      const grant = yield* Effect.promise(
        () =>
          new Promise<string>((resolve) =>
            createInterface({ input: host.stdout! }).on("line", (line) => {
              if (line.startsWith("READY ")) resolve(line.slice("READY ".length))
            })
          )
      )
      const box = yield* sandbox(socket.path)
      assert.isTrue((yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))).ok)
      const inFlight = box.post("callTool", [grant, "sleep", { ms: 20_000 }])
      yield* Effect.sleep("300 millis")
      host.kill("SIGTERM")
      const outcome = yield* Effect.promise(() => inFlight)
      assert.isFalse(outcome.ok)
      assert.strictEqual(outcome.error?.delivery, "unknown", JSON.stringify(outcome))
      yield* Effect.promise(() => exited)
      assert.isFalse(fs.existsSync(socket.path), "the socket file is gone")
      const after = yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))
      assert.strictEqual(after.error?._tag, "HostUnavailable")
      assert.strictEqual(after.error?.delivery, "not_sent")
    })
  )

  it.scopedLive(
    "C47: garbage, an oversized frame, a half-written frame, 200 connections and an idle one: refused, others work, nothing leaks",
    () =>
      Effect.gen(function* () {
        const before = fds()
        const { socket, workers, grants } = yield* listening({ maxFrameBytes: 1024 * 1024, idleTimeout: "2 seconds" })
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const connect = () =>
          new Promise<net.Socket>((resolve, reject) => {
            const conn = net.createConnection(socket.path, () => resolve(conn))
            conn.once("error", reject)
          })
        const closed = (conn: net.Socket) =>
          new Promise<number>((resolve) => {
            const started = Date.now()
            conn.on("data", () => {})
            conn.once("close", () => resolve(Date.now() - started))
          })
        const garbage = yield* Effect.promise(connect)
        garbage.write("\x00\xff not json at all\n")
        yield* Effect.promise(() => closed(garbage))
        const oversized = yield* Effect.promise(connect)
        oversized.write("x".repeat(1024 * 1024 + 10))
        yield* Effect.promise(() => closed(oversized))
        const half = yield* Effect.promise(connect)
        half.end(
          '{"_tag":"Request","id":"1","tag":"callTool","payload":{"id":"' + grant + '","params":"{\\"name\\":\\"inc\\"'
        )
        yield* Effect.promise(() => closed(half))
        const idle = yield* Effect.promise(connect)
        const idleFor = yield* Effect.promise(() => closed(idle))
        assert.isBelow(idleFor, 4_000, "a connection that sends nothing is closed after idleTimeout")
        const many = yield* Effect.promise(() => Promise.all(Array.from({ length: 200 }, connect)))
        const box = yield* sandbox(socket.path)
        const during = yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))
        assert.strictEqual(during.value.structuredContent.count, 1, "the half-written frame ran nothing")
        for (const conn of many) conn.destroy()
        // An answer over the frame bound is ResultTooLarge for its request; the next call goes on.
        const big = yield* Effect.promise(() => box.run("callTool", [grant, "big", { bytes: 2 * 1024 * 1024 }]))
        assert.strictEqual(big.error?._tag, "ResultTooLarge", JSON.stringify(big.error))
        assert.match(big.error?.message ?? "", /frame limit/)
        const next = yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))
        assert.strictEqual(next.value.structuredContent.count, 2)
        assert.strictEqual(yield* Effect.promise(() => box.exit()), 0)
        yield* workers.close(id)
        const settled = yield* Effect.promise(() => eventually(() => fds() <= before + 3, 5_000))
        assert.isTrue(settled, `file descriptors: ${before} before, ${fds()} after`)
      }),
    60_000
  )
})
