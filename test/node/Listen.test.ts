// The listener (NodeMcpWorkers.layerListen) and its clients in other processes: real sandbox processes, a real
// socket, the real stateful fixture server. Clauses: docs/contract.md C43–C46.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import { execFile, spawn } from "node:child_process"
import { statefulConfig } from "../fixtures/servers.js"
import { sandboxEntry, socketPath, startSandbox } from "./listenSandbox.js"
import { structured } from "./helpers.js"

const entry = sandboxEntry()

/** A host listening on a fresh private socket, for the test's scope. */
const listening = (options: Partial<NodeMcpWorkers.ListenOptions> = {}) =>
  Effect.gen(function* () {
    const socket = socketPath()
    const context = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, ...options }))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
    return {
      socket,
      context,
      workers: context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"],
      grants: context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
    }
  })

const sandbox = (socket: string) => Effect.promise(() => startSandbox(entry(), socket))

describe("listener", () => {
  it.scopedLive(
    "C43, C44: three sandbox processes in a row reuse one stateful worker by grant; a fourth reaches only what it was granted",
    () =>
      Effect.gen(function* () {
        const { socket, workers, grants } = yield* listening()
        const a = yield* workers.open(statefulConfig())
        const b = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(a)
        for (const expected of [1, 2, 3]) {
          const box = yield* sandbox(socket.path)
          const outcome = yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))
          assert.isTrue(outcome.ok, JSON.stringify(outcome))
          assert.strictEqual(outcome.value.structuredContent.count, expected)
          assert.strictEqual(yield* Effect.promise(() => box.exit()), 0)
        }
        const narrow = yield* grants.grant(a, { tools: ["inc"] })
        const box = yield* sandbox(socket.path)
        const toB = yield* Effect.promise(() => box.run("callTool", [b, "inc", {}]))
        assert.strictEqual(toB.error?._tag, "UnknownWorker")
        const closeA = yield* Effect.promise(() => box.run("close", [narrow]))
        assert.strictEqual(closeA.error?._tag, "UnknownWorker")
        const echo = yield* Effect.promise(() => box.run("callTool", [narrow, "echo", { token: "x" }]))
        assert.strictEqual(echo.error?._tag, "InvalidInput")
        assert.strictEqual(echo.error?.delivery, "not_sent")
        const listed = yield* Effect.promise(() => box.run("listTools", [narrow]))
        assert.deepStrictEqual(
          listed.value.tools.map((tool: { name: string }) => tool.name),
          ["inc"]
        )
        const status = yield* Effect.promise(() => box.run("status", [narrow]))
        assert.strictEqual(status.value.workerId, narrow, "status names the grant, never the worker id")
        // An unknown, a forged, a revoked and an expired grant are told the same as an unknown id.
        const forged = narrow.slice(0, -2) + (narrow.endsWith("AA") ? "AB" : "AA")
        const revoked = yield* grants.grant(a)
        yield* grants.revoke(revoked)
        const expired = yield* grants.grant(a, { ttl: "1 millis" })
        yield* Effect.sleep("5 millis")
        for (const id of ["mcpg_nothing", forged, revoked, expired]) {
          const outcome = yield* Effect.promise(() => box.run("callTool", [id, "inc", {}]))
          assert.strictEqual(outcome.error?._tag, "UnknownWorker", id)
          assert.strictEqual(outcome.error?.message, `no open worker has the id ${JSON.stringify(id.slice(0, 64))}`)
        }
        // Nothing the fourth sandbox was refused reached either server (the list counts its own call).
        assert.strictEqual(structured(yield* workers.callTool(a, "calls")).calls.length, 4)
        assert.strictEqual(structured(yield* workers.callTool(b, "calls")).calls.length, 1)
        // Closing the worker ends its grants.
        yield* workers.close(a)
        const after = yield* Effect.promise(() => box.run("callTool", [grant, "inc", {}]))
        assert.strictEqual(after.error?._tag, "UnknownWorker")
        assert.strictEqual(yield* Effect.promise(() => box.exit()), 0)
      }),
    60_000
  )

  it.live(
    "examples/sandbox: sandbox processes under Node, Deno and Bun reuse one worker by grant; after revoke, UnknownWorker",
    () =>
      Effect.gen(function* () {
        const stdout = yield* Effect.promise(
          () =>
            new Promise<string>((resolve, reject) =>
              execFile(
                process.execPath,
                ["--import", "tsx", "examples/sandbox/host.ts"],
                { timeout: 150_000 },
                (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
              )
            )
        )
        const lines = stdout.trim().split("\n")
        // Deno and Bun are devDependencies here: every runtime runs, and the count carries across all five.
        const runtimes = ["node", "node", "node", "deno", "bun"]
        assert.deepStrictEqual(
          lines.slice(0, runtimes.length),
          runtimes.map(
            (name, i) => `sandbox ${i + 1} (${name}): {"count":${i + 1}} (a tool outside the grant: InvalidInput)`
          )
        )
        assert.match(lines[runtimes.length]!, /^after revoke: refused: UnknownWorker/)
      }),
    160_000
  )

  it.scopedLive("C45: the socket is 0600 in a 0700 directory; a live host is refused, a stale socket replaced", () =>
    Effect.gen(function* () {
      const { socket } = yield* listening()
      assert.strictEqual(fs.statSync(socket.path).mode & 0o777, 0o600)
      const second = yield* Effect.exit(Layer.build(NodeMcpWorkers.layerListen({ path: socket.path })))
      assert.isTrue(second._tag === "Failure" && JSON.stringify(second.cause).includes("in_use"))
      const open = socketPath()
      fs.chmodSync(open.dir, 0o755)
      const refused = yield* Effect.exit(Layer.build(NodeMcpWorkers.layerListen({ path: open.path })))
      assert.isTrue(refused._tag === "Failure" && JSON.stringify(refused.cause).includes("directory"))
      // A socket file nobody listens on (its host died): replaced.
      const stale = socketPath()
      // A host SIGKILLed while listening leaves its socket file behind.
      const dead = spawn(process.execPath, [
        "-e",
        `require("net").createServer().listen(${JSON.stringify(stale.path)}, () => console.log("up"))`
      ])
      yield* Effect.promise(() => new Promise((resolve) => dead.stdout.once("data", resolve)))
      dead.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => dead.once("exit", resolve)))
      assert.isTrue(fs.existsSync(stale.path))
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(NodeMcpWorkers.layerListen({ path: stale.path }))
          assert.strictEqual(fs.statSync(stale.path).mode & 0o777, 0o600)
        })
      )
      assert.isFalse(fs.existsSync(stale.path), "the socket file is removed when the listener closes")
    })
  )
})
