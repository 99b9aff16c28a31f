// The fault matrix: servers, payloads and hosts that misbehave. Every row asserts what the caller gets AND that
// nothing of ours is left running: no server process (each row tags its servers with TEST_TAG) and no owner thread.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { type HttpFixture, startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import {
  activePorts,
  eventually,
  ownerThread,
  processesWithEnv,
  startedThreads,
  structured,
  tag,
  withHost
} from "./helpers.js"
import { remoteEntry, remoteThread } from "./remoteThread.js"

const entry = remoteEntry()

/** Blocks this thread's event loop (the host's, in these tests) for `ms`, as a CPU-bound step would. */
const blockEventLoop = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Fails the test unless, within 3 s, no process tagged `testTag` lives and no owner thread beyond `ports` runs. */
const nothingLeft = (testTag: string, ports: number) =>
  Effect.promise(async () => {
    assert.isTrue(
      await eventually(() => processesWithEnv("TEST_TAG", testTag).length === 0),
      "a server process is left"
    )
    assert.isTrue(await eventually(() => activePorts() <= ports), "an owner thread is left")
  })

/** A server written inline: `node -e <script>`, tagged. */
const inline = (testTag: string, script: string) => ({
  command: process.execPath,
  args: ["-e", script],
  env: { TEST_TAG: testTag }
})

const httpFixture = Effect.acquireRelease(
  Effect.promise(() => startHttpFixture("http")),
  (server: HttpFixture) => Effect.promise(() => server.stop())
)

const MiB = 1024 * 1024

const textOf = (result: { content?: unknown }): string =>
  ((result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? "") as string

describe("faults", () => {
  describe("C22a: remote calls while the host's event loop is blocked", () => {
    // What the server received: the tokens of every tools/call, and the JSON-RPC ids it was told to cancel.
    const serverSaw = (workers: Context.Tag.Service<McpWorkers>, id: string) =>
      Effect.map(workers.callTool(id, "calls"), (result) => ({
        tokens: (structured(result).calls as Array<{ token?: string }>).map((call) => call.token),
        calls: structured(result).calls as Array<{ id: number; token?: string }>
      }))

    /**
     * Opens a worker, starts a remote thread running `scenario`, lets it call and blocks this (the host's) thread for
     * `blockMs` meanwhile; then runs `check` with what the remote was told. Nothing of ours is left afterwards.
     */
    const stallDuringRemoteCall = (
      scenario: "coldCall" | "timedCall",
      call: { readonly token: string; readonly ms: number; readonly timeout: number },
      blockMs: number,
      check: (
        workers: Context.Tag.Service<McpWorkers>,
        id: string,
        told: { error: any; ms: number }
      ) => Effect.Effect<void, unknown>
    ) =>
      Effect.gen(function* () {
        const testTag = tag()
        const ports = activePorts()
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open({ ...statefulConfig("--exit-on-stdin-eof"), env: { TEST_TAG: testTag } })
          const remote = yield* remoteThread(entry(), { scenario, data: { id, ...call } })
          yield* Effect.promise(() => remote.event("ready"))
          remote.send("go")
          blockEventLoop(blockMs)
          const outcome = yield* Effect.promise(() => remote.outcome)
          assert.isTrue(outcome.ok)
          yield* check(workers, id, outcome.ok ? outcome.value : { error: null, ms: 0 })
          yield* workers.close(id)
        }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layer()))
        yield* nothingLeft(testTag, ports)
      })

    it.live("C22a: a remote call during a host stall ends as the server saw it (not acknowledged: not sent)", () =>
      // A thread that has never heard from the host: its request asks to be acknowledged in time.
      stallDuringRemoteCall("coldCall", { token: "cold", ms: 10, timeout: 10_000 }, 2_000, (workers, id, told) =>
        Effect.gen(function* () {
          assert.strictEqual(told.error?._tag, "HostUnavailable")
          assert.strictEqual(told.error?.encoded?.delivery, "not_sent")
          // Told while the host was still blocked, not after it.
          assert.isBelow(told.ms, 1_900)
          // The host read the request after it woke, and refused it: the server never saw it.
          assert.notInclude((yield* serverSaw(workers, id)).tokens, "cold")
        })
      )
    )

    it.live(
      "C22a: a remote call during a host stall ends as the server saw it (acknowledged: unknown, cancelled)",
      () =>
        // A thread that has heard from the host lately: its request goes without asking for an acknowledgement.
        stallDuringRemoteCall("timedCall", { token: "warm", ms: 1_000, timeout: 20_000 }, 3_600, (workers, id, told) =>
          Effect.gen(function* () {
            // The host may have sent it before it fell silent: unknown, never "no host".
            assert.strictEqual(told.error?._tag, "DeliveryUnknown")
            assert.strictEqual(told.error?.encoded?.reason, "host_unresponsive")
            assert.strictEqual(told.error?.encoded?.delivery, "unknown")
            // Whether the host got it to the server before the remote's interrupt caught up is not known; either way
            // it was stopped: the server did not see it, or saw it and its cancellation.
            const sent = (yield* serverSaw(workers, id)).calls.find((call) => call.token === "warm")
            if (sent === undefined) return
            const cancelled = structured(yield* workers.callTool(id, "cancelled")).cancelled as Array<{
              requestId: number
            }>
            assert.include(
              cancelled.map((c) => c.requestId),
              sent.id
            )
          })
        )
    )

    it.live("C22a: a request whose deadline passed while the host was blocked is never sent", () =>
      stallDuringRemoteCall("timedCall", { token: "expired", ms: 10, timeout: 300 }, 1_500, (workers, id, told) =>
        Effect.gen(function* () {
          assert.strictEqual(told.error?._tag, "DeliveryUnknown")
          assert.strictEqual(told.error?.encoded?.reason, "timeout")
          assert.notInclude((yield* serverSaw(workers, id)).tokens, "expired")
          // The same rule in the host's own thread: a spent budget sends nothing.
          const local = yield* Effect.flip(workers.callTool(id, "echo", { token: "zero" }, { timeout: 0 }))
          assert.strictEqual(local._tag, "DeadlineExceeded")
          assert.notInclude((yield* serverSaw(workers, id)).tokens, "zero")
        })
      )
    )
  })

  describe("servers that misbehave", () => {
    /** Opens a tagged stateful server with `flags`, runs `body`, closes it, and checks nothing is left. */
    const withServer = <A, E>(
      flags: ReadonlyArray<string>,
      body: (workers: Context.Tag.Service<McpWorkers>, id: string) => Effect.Effect<A, E>
    ) =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const id = yield* workers.open({ ...statefulConfig(...flags), env: { TEST_TAG: testTag } })
          yield* body(workers, id)
          const closed = yield* workers.close(id)
          assert.strictEqual(closed.cleanup?.activeProcesses, 0)
          yield* nothingLeft(testTag, ports)
        })
      )

    it.live("dies mid-call: WorkerFailed (unknown), then not_sent, never restarted; close confirms", () =>
      withServer([], (workers, id) =>
        Effect.gen(function* () {
          const pid = (yield* workers.status(id)).pid
          const error = yield* Effect.flip(workers.callTool(id, "exit", { code: 9, delayMs: 50 }))
          assert.strictEqual(error._tag, "WorkerFailed")
          assert.strictEqual((error as { delivery?: string }).delivery, "unknown")
          const next = yield* Effect.flip(workers.callTool(id, "echo", { token: "x" }))
          assert.strictEqual(next._tag, "WorkerFailed")
          assert.strictEqual((next as { delivery?: string }).delivery, "not_sent")
          const status = yield* workers.status(id)
          assert.strictEqual(status.state, "failed")
          assert.strictEqual(status.pid, pid)
        })
      )
    )

    it.live("never answers initialize: OpenFailed at stage timeout, nothing left", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const error = yield* Effect.flip(
            workers.open(
              { ...statefulConfig("--hang-on-initialize"), env: { TEST_TAG: testTag } },
              { timeout: "1 second" }
            )
          )
          assert.strictEqual(error._tag, "OpenFailed")
          if (error._tag === "OpenFailed") assert.strictEqual(error.stage, "timeout")
          yield* nothingLeft(testTag, ports)
        })
      )
    )

    it.live("never answers a call: DeliveryUnknown(timeout) within the budget, then the next call answers", () =>
      withServer([], (workers, id) =>
        Effect.gen(function* () {
          const started = Date.now()
          const error = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 60_000 }, { timeout: 300 }))
          assert.strictEqual(error._tag, "DeliveryUnknown")
          assert.isBelow(Date.now() - started, 2_000)
          assert.strictEqual(textOf(yield* workers.callTool(id, "echo", { token: "next" })), "next")
        })
      )
    )

    it.live("prints a banner and log lines on stdout: they are skipped, the answers arrive", () =>
      withServer(["--banner"], (workers, id) =>
        Effect.gen(function* () {
          assert.strictEqual(textOf(yield* workers.callTool(id, "banner")), "banner")
          assert.strictEqual(textOf(yield* workers.callTool(id, "echo", { token: "after" })), "after")
          assert.strictEqual((yield* workers.status(id)).state, "ready")
        })
      )
    )

    it.live("answers with an id nobody asked for: dropped; the caller gets its own answer", () =>
      withServer([], (workers, id) =>
        Effect.gen(function* () {
          assert.strictEqual(textOf(yield* workers.callTool(id, "stray")), "mine")
          assert.strictEqual(textOf(yield* workers.callTool(id, "echo", { token: "next" })), "next")
          assert.strictEqual((yield* workers.status(id)).state, "ready")
        })
      )
    )

    it.live("floods 2,000 notifications before answering: the answer arrives, the worker stays ready", () =>
      withServer([], (workers, id) =>
        Effect.gen(function* () {
          const result = yield* workers.callTool(id, "flood", { count: 2000 }, { timeout: "20 seconds" })
          assert.strictEqual(structured(result).flooded, 2000)
          assert.strictEqual(textOf(yield* workers.callTool(id, "echo", { token: "next" })), "next")
        })
      )
    )

    it.live("ignores stdin EOF, ignores SIGTERM, has a setsid grandchild: each close ends its whole tree", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const env = { TEST_TAG: testTag }
          const ignoresEof = yield* workers.open({ ...statefulConfig(), env })
          const ignoresTerm = yield* workers.open({ ...statefulConfig("--ignore-sigterm"), env })
          const escapes = yield* workers.open({ ...statefulConfig(), env })
          yield* workers.callTool(escapes, "spawn", { setsid: true })
          assert.strictEqual(processesWithEnv("TEST_TAG", testTag).length, 4)
          const closed = yield* Effect.all(
            [workers.close(ignoresEof), workers.close(ignoresTerm, { timeout: "2 seconds" }), workers.close(escapes)],
            { concurrency: "unbounded" }
          )
          for (const status of closed) assert.strictEqual(status.cleanup?.activeProcesses, 0)
          // What matters is that nothing is left (below); which signals did it is counted by whichever side confirmed
          // last, and the owner's count is lost when its answer misses the close budget on a busy machine.
          yield* nothingLeft(testTag, ports)
        })
      )
    )
  })

  describe("hosts and threads that go away", () => {
    it.scopedLive("the owner thread dies: the call in flight is WorkerFailed(thread), the host ends the tree", () =>
      Effect.gen(function* () {
        const threads = yield* startedThreads
        const testTag = tag()
        const ports = activePorts()
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: testTag } })
          const inflight = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 10_000 }))
          while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
          const thread = yield* ownerThread(threads, (yield* workers.status(id)).threadId)
          yield* Effect.promise(() => thread.terminate())
          const error = yield* Effect.flip(Fiber.join(inflight))
          assert.strictEqual(error._tag, "WorkerFailed")
          if (error._tag === "WorkerFailed") assert.deepInclude(error, { kind: "thread", delivery: "unknown" })
          assert.isTrue(
            yield* Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", testTag).length === 0))
          )
          assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
        }).pipe(Effect.provide(NodeMcpWorkers.layer()))
        yield* nothingLeft(testTag, ports)
      })
    )

    it.live("the host scope closes with calls in flight: each ends as DeliveryUnknown(interrupted), trees ended", () =>
      Effect.gen(function* () {
        const testTag = tag()
        const ports = activePorts()
        const scope = yield* Scope.make()
        const workers = yield* Layer.buildWithScope(NodeMcpWorkers.layer(), scope).pipe(
          Effect.map((context) => Context.get(context, McpWorkers))
        )
        const ids = yield* Effect.all(
          [1, 2].map(() => workers.open({ ...statefulConfig(), env: { TEST_TAG: testTag } })),
          { concurrency: "unbounded" }
        )
        const calls = yield* Effect.all(
          ids.map((id) => Effect.fork(workers.callTool(id, "sleep", { ms: 30_000 }))),
          { concurrency: "unbounded" }
        )
        for (const id of ids) while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        yield* Scope.close(scope, Exit.void)
        for (const call of calls) {
          const error = yield* Effect.flip(Fiber.join(call))
          assert.strictEqual(error._tag, "DeliveryUnknown")
          if (error._tag === "DeliveryUnknown") assert.strictEqual(error.reason, "interrupted")
        }
        yield* nothingLeft(testTag, ports)
      })
    )

    it.scopedLive("a remote thread is terminated mid-call: its request is cancelled and the worker is freed", () =>
      Effect.gen(function* () {
        const testTag = tag()
        const ports = activePorts()
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: testTag } })
          const remote = yield* remoteThread(entry(), { scenario: "hang", data: { id, token: "orphan" } })
          yield* Effect.promise(() => remote.event("calling"))
          while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
          const { requestId } = yield* workers.status(id)
          yield* Effect.promise(() => remote.thread.terminate())
          const terminated = Date.now()
          while ((yield* workers.status(id)).busy) yield* Effect.sleep(20)
          assert.isBelow(Date.now() - terminated, 5_000)
          const sent = (
            structured(yield* workers.callTool(id, "calls")).calls as Array<{ id: number; token?: string }>
          ).find((call) => call.token === "orphan")!
          const cancelled = structured(yield* workers.callTool(id, "cancelled")).cancelled as Array<{
            requestId: number
          }>
          assert.include(
            cancelled.map((c) => c.requestId),
            sent.id
          )
          assert.isString(requestId)
          assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
        }).pipe(Effect.provide(NodeMcpWorkers.layer()))
        yield* nothingLeft(testTag, ports)
      })
    )
  })

  describe("C26: results of any size, up to a limit", () => {
    it.live("C26: a 20 MB result arrives whole", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const id = yield* workers.open({ ...statefulConfig("--exit-on-stdin-eof"), env: { TEST_TAG: testTag } })
          const started = Date.now()
          const result = yield* workers.callTool(id, "big", { bytes: 20_000_000 })
          const tookMs = Date.now() - started
          assert.strictEqual(textOf(result).length, 20_000_000)
          // Far below any budget: the answer was never dropped and waited for (it took 40 s and more when it was).
          assert.isBelow(tookMs, 10_000)
          assert.strictEqual((yield* workers.status(id)).state, "ready")
          yield* workers.close(id)
          yield* nothingLeft(testTag, ports)
        })
      )
    )

    it.live("C26: a result over maxResultBytes fails at once with ResultTooLarge; the worker stays ready", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const id = yield* workers.open({
            ...statefulConfig("--exit-on-stdin-eof"),
            env: { TEST_TAG: testTag },
            maxResultBytes: MiB
          })
          const started = Date.now()
          const error = yield* Effect.flip(workers.callTool(id, "big", { bytes: 40 * MiB }, { timeout: "60 seconds" }))
          assert.isBelow(Date.now() - started, 10_000)
          assert.strictEqual(error._tag, "ResultTooLarge")
          if (error._tag !== "ResultTooLarge") return
          assert.strictEqual(error.delivery, "unknown")
          assert.strictEqual(error.limit, MiB)
          assert.isAbove(error.bytes, MiB)
          assert.match(error.requestId, /^req_/)
          // The rest of that answer was skipped, not read as messages: the next call gets its own answer.
          const status = yield* workers.status(id)
          assert.strictEqual(status.state, "ready")
          assert.isFalse(status.busy)
          const echoed = yield* workers.callTool(id, "echo", { token: "after" })
          assert.strictEqual(textOf(echoed), "after")
          // Within the limit, a large answer still arrives.
          assert.strictEqual(textOf(yield* workers.callTool(id, "big", { bytes: MiB - 1024 })).length, MiB - 1024)
          yield* workers.close(id)
          yield* nothingLeft(testTag, ports)
        })
      )
    )

    it.scopedLive("C26: over HTTP, an answer over maxResultBytes fails with ResultTooLarge; the session goes on", () =>
      Effect.gen(function* () {
        const server = yield* httpFixture
        const ports = activePorts()
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open({ url: server.url, maxResultBytes: MiB })
          const error = yield* Effect.flip(workers.callTool(id, "big", { bytes: 8 * MiB }, { timeout: "60 seconds" }))
          assert.strictEqual(error._tag, "ResultTooLarge")
          assert.strictEqual((yield* workers.status(id)).state, "ready")
          assert.strictEqual(textOf(yield* workers.callTool(id, "echo", { token: "next" })), "next")
          yield* workers.close(id)
        }).pipe(withHost)
        yield* nothingLeft(tag(), ports)
      })
    )

    it("C26: maxResultBytes must be a positive whole number", () =>
      Effect.runPromise(
        withHost(
          Effect.gen(function* () {
            const workers = yield* McpWorkers
            const error = yield* Effect.flip(workers.open({ ...statefulConfig(), maxResultBytes: 0 }))
            assert.strictEqual(error._tag, "InvalidInput")
            if (error._tag === "InvalidInput") assert.strictEqual(error.path, "config.maxResultBytes")
          })
        )
      ))
  })

  describe("C28: a server that dies at start says why", () => {
    const diesAtStart = (name: string, script: string, exitCode: number, says: string) =>
      it.live(`C28: a server that dies at start says why (${name})`, () =>
        withHost(
          Effect.gen(function* () {
            const workers = yield* McpWorkers
            const testTag = tag()
            const ports = activePorts()
            const error = yield* Effect.flip(workers.open(inline(testTag, script)))
            assert.strictEqual(error._tag, "OpenFailed")
            if (error._tag !== "OpenFailed") return
            assert.strictEqual(error.stage, "initialize")
            assert.strictEqual(error.exitCode, exitCode)
            assert.include(error.stderrTail ?? "", says)
            assert.include(error.message, `code ${exitCode}`)
            yield* nothingLeft(testTag, ports)
          })
        )
      )

    diesAtStart("at once", "console.error('FATAL: API_TOKEN is not set'); process.exit(3)", 3, "API_TOKEN is not set")
    diesAtStart(
      "after 100 ms",
      "setTimeout(() => { console.error('FATAL: config file missing'); process.exit(4) }, 100)",
      4,
      "config file missing"
    )

    it.live("C28: a server that dies at start says why (after reading initialize)", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const error = yield* Effect.flip(
            workers.open({
              ...statefulConfig("--crash-on-initialize", "--stderr", "FATAL: refused the handshake"),
              env: { TEST_TAG: testTag }
            })
          )
          assert.strictEqual(error._tag, "OpenFailed")
          if (error._tag !== "OpenFailed") return
          assert.strictEqual(error.stage, "initialize")
          assert.strictEqual(error.exitCode, 7)
          assert.include(error.stderrTail ?? "", "refused the handshake")
          yield* nothingLeft(testTag, ports)
        })
      )
    )

    it.live("C28: a server killed by a signal at start reports the signal", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const error = yield* Effect.flip(
            workers.open(inline(testTag, "console.error('about to crash'); process.kill(process.pid, 'SIGSEGV')"))
          )
          assert.strictEqual(error._tag, "OpenFailed")
          if (error._tag !== "OpenFailed") return
          assert.strictEqual(error.stage, "initialize")
          assert.strictEqual(error.signal, "SIGSEGV")
          assert.isUndefined(error.exitCode)
          assert.include(error.stderrTail ?? "", "about to crash")
          yield* nothingLeft(testTag, ports)
        })
      )
    )
  })
})
