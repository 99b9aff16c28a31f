// McpClient: one connection for the life of a scope, in the calling thread, on the core Owner and the node
// transports; the same request rules as a worker, and the same confirmed cleanup when the scope closes.
import { assert, describe, it } from "@effect/vitest"
import { DeliveryUnknown } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import { McpClient, PromiseClient } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type HttpFixture, startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import { eventually, isAlive, processesWithEnv, structured, tag } from "./helpers.js"
import {
  abortedByInterruption,
  abortedByPromise,
  effectSurface,
  exerciseBehaviour,
  expectedBehaviour
} from "./behaviourSuite.js"
import { exercise, exerciseProgress, expected, expectedProgress, type Surface } from "./operationsSuite.js"

const config = (t: string, ...flags: Array<string>) => ({
  ...statefulConfig("--exit-on-stdin-eof", ...flags),
  env: { TEST_TAG: t }
})

/** The JSON-RPC id under which the server received the call carrying `token`. */
const jsonRpcIdOf = (client: McpClient.McpClient, token: string) =>
  Effect.map(client.callTool("calls"), (result) => {
    const calls = structured(result).calls as Array<{ id: number; token?: string }>
    const found = calls.filter((call) => call.token === token)
    assert.strictEqual(found.length, 1, `exactly one call carried ${token}`)
    return found[0]!.id
  })

const cancelledIds = (client: McpClient.McpClient) =>
  Effect.map(client.callTool("cancelled"), (result) =>
    (structured(result).cancelled as Array<{ requestId: number }>).map((entry) => entry.requestId)
  )

/** Waits until the client reports a request in flight and returns its id. */
const inFlight = (client: McpClient.McpClient) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      const status = yield* client.status
      if (status.requestId !== null) return status.requestId
      yield* Effect.sleep(5)
    }
    return assert.fail("no request went in flight")
  })

describe("C33: McpClient", () => {
  it.live("opens, calls and closes with the scope: the server's process is confirmed gone", () =>
    Effect.gen(function* () {
      const t = tag()
      const seen = yield* McpClient.withClient(config(t), (client) =>
        Effect.gen(function* () {
          const status = yield* client.status
          assert.strictEqual(status.state, "ready")
          assert.isNull(status.threadId)
          assert.match(status.workerId, /^mcpw_/)
          assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [status.pid])
          const tools = yield* client.listTools()
          assert.includeMembers(
            tools.tools.map((tool) => tool.name),
            ["inc", "echo", "sleep"]
          )
          assert.strictEqual(structured(yield* client.callTool("inc", { by: 2 })).count, 2)
          assert.strictEqual(structured(yield* client.callTool("inc")).count, 3)
          const info = structured(yield* client.callTool("info"))
          return { pid: status.pid!, serverPid: info.pid as number }
        })
      )
      assert.strictEqual(seen.pid, seen.serverPid)
      // Confirmed before the scope's close returned: no polling.
      assert.isFalse(isAlive(seen.pid))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
    })
  )

  it.live("a scope closed by a failure or an interruption cleans up too, grandchildren included", () =>
    Effect.gen(function* () {
      const t = tag()
      const pids: Array<number> = []
      const failed = yield* Effect.exit(
        McpClient.withClient(config(t), (client) =>
          Effect.gen(function* () {
            pids.push((yield* client.status).pid!)
            pids.push(structured(yield* client.callTool("spawn", { setsid: true })).pid)
            return yield* Effect.fail("boom" as const)
          })
        )
      )
      assert.deepStrictEqual(failed, Exit.fail("boom" as const))
      assert.strictEqual(pids.length, 2)
      for (const pid of pids) assert.isFalse(isAlive(pid))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])

      const u = tag()
      const fiber = yield* Effect.fork(
        McpClient.withClient(config(u), (client) => client.callTool("sleep", { ms: 10_000 }))
      )
      for (let i = 0; i < 400 && processesWithEnv("TEST_TAG", u).length === 0; i++) yield* Effect.sleep(10)
      const running = processesWithEnv("TEST_TAG", u)
      assert.strictEqual(running.length, 1)
      // Let the call go out, then interrupt the fiber that holds the scope.
      yield* Effect.sleep(200)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
      assert.isFalse(isAlive(running[0]!))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", u), [])
    })
  )

  it.live("an open interrupted half way leaves nothing running", () =>
    Effect.gen(function* () {
      const t = tag()
      const fiber = yield* Effect.fork(
        McpClient.withClient(config(t, "--hang-on-initialize"), (client) => client.ping())
      )
      for (let i = 0; i < 400 && processesWithEnv("TEST_TAG", t).length === 0; i++) yield* Effect.sleep(10)
      assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 1)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
    })
  )

  it.scopedLive("a concurrent call is refused with WorkerBusy, not sent and not queued", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.make(config(tag()))
      const slow = yield* Effect.fork(client.callTool("sleep", { ms: 500, token: "first" }))
      const requestId = yield* inFlight(client)
      const busy = yield* Effect.flip(client.callTool("echo", { token: "second" }))
      assert.strictEqual(busy._tag, "WorkerBusy")
      if (busy._tag === "WorkerBusy") {
        assert.strictEqual(busy.requestId, requestId)
        assert.strictEqual(busy.delivery, "not_sent")
      }
      yield* Fiber.join(slow)
      const calls = structured(yield* client.callTool("calls")).calls as Array<{ token?: string }>
      assert.deepStrictEqual(
        calls.map((call) => call.token).filter((token) => token !== undefined),
        ["first"]
      )
    })
  )

  it.scopedLive("a timeout ends the call with DeliveryUnknown and cancels exactly that request at the server", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.make(config(tag()))
      const started = Date.now()
      const error = yield* Effect.flip(client.callTool("sleep", { ms: 5_000, token: "slow" }, { timeout: 150 }))
      assert.isBelow(Date.now() - started, 1_000)
      assert.strictEqual(error._tag, "DeliveryUnknown")
      if (error._tag === "DeliveryUnknown") {
        assert.strictEqual(error.reason, "timeout")
        assert.strictEqual(error.delivery, "unknown")
      }
      const status = yield* client.status
      assert.strictEqual(status.state, "ready")
      assert.isFalse(status.busy)
      assert.strictEqual(structured(yield* client.callTool("echo", { token: "next" })).token, "next")
      const rpcId = yield* jsonRpcIdOf(client, "slow")
      assert.deepStrictEqual(yield* cancelledIds(client), [rpcId])
    })
  )

  it.scopedLive("interrupting the calling fiber, or cancel(requestId), cancels exactly that request", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.make(config(tag()))
      const fiber = yield* Effect.fork(client.callTool("sleep", { ms: 5_000, token: "interrupted" }))
      yield* inFlight(client)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
      assert.isFalse((yield* client.status).busy)

      const target = yield* Effect.fork(client.callTool("sleep", { ms: 5_000, token: "target" }))
      const requestId = yield* inFlight(client)
      // In the form every request id has, and never the id of the request before it.
      assert.isTrue(WorkerId.isRequestId(requestId))
      yield* client.cancel(requestId)
      const cancelled = yield* Effect.flip(Fiber.join(target))
      assert.strictEqual(cancelled._tag, "DeliveryUnknown")
      if (cancelled._tag === "DeliveryUnknown") {
        assert.strictEqual(cancelled.reason, "cancelled")
        assert.strictEqual(cancelled.requestId, requestId)
      }
      assert.strictEqual((yield* Effect.flip(client.cancel(requestId)))._tag, "RequestNotPending")

      const first = yield* jsonRpcIdOf(client, "interrupted")
      const second = yield* jsonRpcIdOf(client, "target")
      assert.deepStrictEqual(yield* cancelledIds(client), [first, second])
      assert.strictEqual((yield* client.status).state, "ready")
    })
  )

  it.scopedLive("a server that exits mid-call fails the call with WorkerFailed, then refuses without sending", () =>
    Effect.gen(function* () {
      const t = tag()
      const client = yield* McpClient.make(config(t))
      const pid = (yield* client.status).pid!
      const error = yield* Effect.flip(client.callTool("exit", { code: 3 }))
      assert.strictEqual(error._tag, "WorkerFailed")
      if (error._tag === "WorkerFailed") assert.strictEqual(error.delivery, "unknown")
      const status = yield* client.status
      assert.strictEqual(status.state, "failed")
      assert.isNotNull(status.lastFailure)
      const later = yield* Effect.flip(client.ping())
      assert.strictEqual(later._tag, "WorkerFailed")
      if (later._tag === "WorkerFailed") assert.strictEqual(later.delivery, "not_sent")
      // No reconnect: no new server was started.
      assert.isFalse(isAlive(pid))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
    })
  )

  it.scopedLive("close ends the connection early; a request after it is not sent", () =>
    Effect.gen(function* () {
      const t = tag()
      const client = yield* McpClient.make(config(t))
      const pid = (yield* client.status).pid!
      const closed = yield* client.close()
      assert.strictEqual(closed.state, "closed")
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      assert.isFalse(isAlive(pid))
      const after = yield* Effect.flip(client.callTool("inc"))
      assert.deepInclude(after, { _tag: "WorkerFailed", kind: "closing", delivery: "not_sent" })
    })
  )

  it.scopedLive("over streamable HTTP: one session for the scope, cancelled exactly, ended with DELETE", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("http")),
        (fixture: HttpFixture) => Effect.promise(() => fixture.stop())
      )
      const sessions = yield* McpClient.withClient({ url: server.url }, (client) =>
        Effect.gen(function* () {
          const status = yield* client.status
          assert.strictEqual(status.state, "ready")
          assert.isNull(status.pid)
          assert.strictEqual(structured(yield* client.callTool("inc")).count, 1)
          const error = yield* Effect.flip(client.callTool("sleep", { ms: 5_000, token: "slow" }, { timeout: 150 }))
          assert.strictEqual(error._tag, "DeliveryUnknown")
          assert.strictEqual(structured(yield* client.callTool("inc")).count, 2)
          return (yield* Effect.promise(() => server.log())).sessions.map((session) => session.id)
        })
      )
      assert.strictEqual(sessions.length, 1)
      const log = yield* Effect.promise(() => server.log())
      const slow = log.calls.find((call) => call.token === "slow")
      assert.isDefined(slow)
      assert.deepStrictEqual(
        log.cancelled.map((cancel) => cancel.requestId),
        [slow!.id]
      )
      // The scope's end closed the session.
      assert.deepStrictEqual(
        log.deletes.map((d) => d.sessionId),
        sessions
      )
    })
  )

  it.live("a bad config is refused with InvalidInput and where it is; nothing starts", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        McpClient.withClient({ command: "node", args: ["x", 1 as unknown as string] }, () => Effect.void)
      )
      assert.strictEqual(error._tag, "InvalidInput")
      if (error._tag === "InvalidInput") {
        assert.strictEqual(error.where, "config")
        assert.strictEqual(error.path, "config.args[1]")
      }
      const timeout = yield* Effect.flip(
        McpClient.withClient(statefulConfig(), () => Effect.void, { timeout: "-1 millis" })
      )
      assert.deepInclude(timeout, { _tag: "InvalidInput", path: "options.timeout" })
    })
  )

  it.live("the request operations and progress, as on every other surface", () =>
    McpClient.withClient(statefulConfig("--exit-on-stdin-eof"), (client) =>
      Effect.gen(function* () {
        // The suite passes an id first: the client has none, so it is dropped here.
        const surface: Surface = Object.fromEntries(
          Object.keys(Operations.requests).map((name) => [
            name,
            (_id: string, ...args: Array<unknown>) =>
              Effect.runPromise(Effect.either((client as any)[name](...args) as Effect.Effect<unknown, unknown>)).then(
                (either) => (either._tag === "Right" ? either.right : Promise.reject(either.left))
              )
          ])
        ) as unknown as Surface
        assert.deepStrictEqual(yield* Effect.promise(() => exercise(surface, client.workerId)), expected)
        assert.deepStrictEqual(
          yield* Effect.promise(() => exerciseProgress(surface, client.workerId)),
          expectedProgress
        )
      })
    )
  )

  it.live(
    "results are the server's raw objects (unknown fields kept, 1 MiB exact); stray stdout lines are skipped",
    () =>
      // The fixture writes, every 20 ms: text that is not JSON, JSON that is no JSON-RPC message, and a response to
      // a request nobody made. None of them is an answer, and none of them breaks the connection.
      McpClient.withClient(statefulConfig("--exit-on-stdin-eof", "--garbage-stdout"), (client) =>
        Effect.gen(function* () {
          const result = yield* client.callTool("structured")
          assert.deepStrictEqual(result.structuredContent, { a: 1, nested: { b: [1, null, ""] } })
          assert.deepStrictEqual(result._meta, { "x-fixture": true })
          assert.strictEqual((result as Record<string, unknown>).extraField, "kept")
          for (const bytes of [0, 65_536, 1_048_576]) {
            const big = yield* client.callTool("big", { bytes })
            assert.strictEqual((big.content as Array<{ text: string }>)[0]!.text.length, bytes)
          }
          for (let i = 0; i < 20; i++) {
            assert.strictEqual(structured(yield* client.callTool("echo", { token: `t${i}` })).token, `t${i}`)
            yield* Effect.sleep(5)
          }
          assert.strictEqual((yield* client.status).state, "ready")
        })
      )
  )

  it.live("the request rules every surface follows (busy, budget, cancel, a caller who stops waiting)", () =>
    McpClient.withClient(statefulConfig("--exit-on-stdin-eof"), (client) =>
      Effect.gen(function* () {
        // The suite passes an id first: the client has none, so it is dropped here.
        const surface = effectSurface({
          callTool: (_id, name, args, options) => client.callTool(name, args, options),
          cancel: (_id, requestId) => client.cancel(requestId),
          status: () => client.status
        })
        const seen = yield* Effect.promise(() =>
          exerciseBehaviour({ ...surface, takesWorkerIds: false }, client.workerId)
        )
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByInterruption, { takesWorkerIds: false }))
      })
    )
  )

  it.live("server requests go to the handlers given; capabilities follow them", () =>
    Effect.gen(function* () {
      const handlers = {
        roots: () => Effect.succeed({ roots: [{ uri: "file:///tmp/project", name: "project" }] })
      }
      const withHandlers = yield* McpClient.withClient(
        statefulConfig("--exit-on-stdin-eof"),
        (client) =>
          Effect.gen(function* () {
            const capabilities = structured(yield* client.callTool("capabilities")).capabilities
            const roots = structured(yield* client.callTool("ask", { kind: "roots" })).answer
            return { capabilities: Object.keys(capabilities), roots: roots.roots }
          }),
        { handlers }
      )
      assert.deepStrictEqual(withHandlers, {
        capabilities: ["roots"],
        roots: [{ uri: "file:///tmp/project", name: "project" }]
      })
      const without = yield* McpClient.withClient(statefulConfig("--exit-on-stdin-eof"), (client) =>
        Effect.map(client.callTool("capabilities"), (result) => structured(result).capabilities)
      )
      assert.deepStrictEqual(without, {})
    })
  )
})

describe("PromiseClient.withClient", () => {
  it.live("the request rules every surface follows, with an AbortSignal", () =>
    Effect.promise(async () => {
      const seen = await PromiseClient.withClient(statefulConfig("--exit-on-stdin-eof"), (client) =>
        exerciseBehaviour(
          {
            callTool: (_id, name, args, options) => client.callTool(name, args, options),
            cancel: (_id, requestId) => client.cancel(requestId),
            status: () => client.status(),
            takesWorkerIds: false
          },
          client.workerId
        )
      )
      assert.deepStrictEqual(seen, expectedBehaviour(abortedByPromise, { takesWorkerIds: false }))
    })
  )

  it.live("the callback gets the operations as Promises; the connection closes once it settles", () =>
    Effect.promise(async () => {
      const t = tag()
      let pid = 0
      const count = await PromiseClient.withClient(config(t), async (client) => {
        const status = await client.status()
        pid = status.pid!
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [pid])
        await client.callTool("inc", { by: 2 }, { timeout: 5_000 })
        const sleeping = client.callTool("sleep", { ms: 10_000, token: "cancel-me" })
        let requestId: string | null = null
        while (requestId === null) {
          requestId = (await client.status()).requestId
          if (requestId === null) await new Promise((resolve) => setTimeout(resolve, 5))
        }
        await client.cancel(requestId)
        const cancelled = await sleeping.then(
          () => null,
          (error: unknown) => error
        )
        assert.instanceOf(cancelled, DeliveryUnknown)
        assert.deepInclude(cancelled, { requestId, reason: "cancelled", delivery: "unknown" })

        // A signal aborted while the request is out cancels it at the server.
        const controller = new AbortController()
        const aborted = client.callTool("sleep", { ms: 10_000, token: "aborted" }, { signal: controller.signal })
        setTimeout(() => controller.abort(), 50)
        const abortError = await aborted.then(
          () => null,
          (error: unknown) => error
        )
        assert.deepInclude(abortError, { _tag: "DeliveryUnknown", reason: "interrupted" })
        // Aborted before the call: rejected with the signal's reason, nothing sent.
        const reason = new Error("too late")
        const never = await client.callTool("inc", {}, { signal: AbortSignal.abort(reason) }).then(
          () => null,
          (error: unknown) => error
        )
        assert.strictEqual(never, reason)
        const cancelledAtServer = structured(await client.callTool("cancelled")).cancelled as Array<unknown>
        assert.strictEqual(cancelledAtServer.length, 2)
        return structured(await client.callTool("inc")).count as number
      })
      assert.strictEqual(count, 3)
      assert.isFalse(isAlive(pid))
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])

      // A rejecting callback rejects withClient with its error, and still closes the connection.
      const u = tag()
      const failure = new Error("callback failed")
      const rejected = await PromiseClient.withClient(config(u), async (client) => {
        await client.ping()
        throw failure
      }).then(
        () => null,
        (error: unknown) => error
      )
      assert.strictEqual(rejected, failure)
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", u), [])

      // Opening rejects with the tagged error.
      const invalid = await PromiseClient.withClient({ command: "" }, async () => 1).then(
        () => null,
        (error: unknown) => error
      )
      assert.deepInclude(invalid, { _tag: "InvalidInput", where: "config" })
    })
  )
})

// The process that holds the client ending without its finalizers: a real Node program
// (test/fixtures/client-program.ts).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** Runs the client program until it printed its server's tree; released by SIGKILL and a sweep of its tag. */
const clientProgram = (mode: "wait" | "exit", t: string) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ tree: Array<number>; kill: () => void; exited: Promise<unknown> }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            ["--import", "tsx", path.join(root, "test/fixtures/client-program.ts"), mode, t],
            { cwd: root, stdio: ["ignore", "pipe", "pipe"] }
          )
          const exited = new Promise((done) => child.on("close", done))
          let stdout = ""
          let stderr = ""
          child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
          child.stdout.on("data", (chunk: Buffer) => {
            stdout += chunk.toString("utf8")
            if (!stdout.includes(`READY ${t}\n`)) return
            const tree = (/^TREE ([\d ]+)$/m.exec(stdout)?.[1] ?? "").split(" ").filter(Boolean).map(Number)
            resolve({ tree, kill: () => child.kill("SIGKILL"), exited })
          })
          void exited.then(() => reject(new Error(`the client program exited before READY:\n${stdout}\n${stderr}`)))
        })
    ),
    (program) =>
      Effect.promise(async () => {
        program.kill()
        await program.exited
        for (const pid of processesWithEnv("TEST_TAG", t)) process.kill(pid, "SIGKILL")
      })
  )

describe("McpClient when its process dies", () => {
  it.scopedLive("SIGKILL: the reaper ends the whole tree, the setsid escapee included (C27)", () =>
    Effect.gen(function* () {
      const t = tag()
      const program = yield* clientProgram("wait", t)
      assert.strictEqual(program.tree.length, 4, "server, 2 grandchildren, 1 setsid escapee")
      assert.sameMembers(processesWithEnv("TEST_TAG", t), program.tree)
      program.kill()
      yield* Effect.promise(() => program.exited)
      // A killed process stops showing its environment before the kernel has torn it down: both checks wait.
      const gone = () => processesWithEnv("TEST_TAG", t).length === 0 && !program.tree.some(isAlive)
      assert.isTrue(yield* Effect.promise(() => eventually(gone, 3000)))
    })
  )

  it.scopedLive("process.exit(0) without finalizers: the exit hook ends the group and the marked escapee", () =>
    Effect.gen(function* () {
      const t = tag()
      const program = yield* clientProgram("exit", t)
      yield* Effect.promise(() => program.exited)
      assert.strictEqual(program.tree.length, 4)
      const gone = () => processesWithEnv("TEST_TAG", t).length === 0 && !program.tree.some(isAlive)
      assert.isTrue(yield* Effect.promise(() => eventually(gone, 3000)))
    })
  )
})
