// NodeMcpWorkers.layerRemote: the same workers, by id, from other worker_threads of the process (C22, C23).
// The host runs in this (the test's) thread; every remote is a fresh thread running a scenario of remote-entry.ts.
import { assert, describe, it } from "@effect/vitest"
import { DeliveryUnknown, HostUnavailable, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"
import { statefulConfig } from "../fixtures/servers.js"
import { eventually, isAlive, processesWithEnv, sharedHost, structured, tag } from "./helpers.js"
import type { ThreadInput } from "./remote-entry.js"
import { remoteEntry, remoteThread, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const withHost = <A, E>(effect: Effect.Effect<A, E, McpWorkers | Scope.Scope>) =>
  Effect.scoped(Effect.provide(effect, NodeMcpWorkers.layer()))

// Tests that mostly wait on the host's patience run at once, on one host (helpers.ts).
const withSharedHost = sharedHost()

// runInThread fails when a thread does not exit once its scenario has reported (an idle channel keeping it alive).
const hostHoldMs = 2000

const run = (scenario: ThreadInput["scenario"], data: Record<string, unknown>, env?: Record<string, string>) =>
  runInThread(entry(), { scenario, data }, env === undefined ? {} : { env })

interface ServerRecords {
  readonly calls: ReadonlyArray<{ id: number | string; name: string; token?: string }>
  readonly cancelled: ReadonlyArray<{ requestId: number | string | null; reason: string | null }>
  readonly aborted: ReadonlyArray<{ requestId: number | string }>
}

/** What the server received: every tools/call and every notifications/cancelled. */
const records = (workers: McpWorkers["Type"], id: string) =>
  Effect.gen(function* () {
    const calls = structured(yield* workers.callTool(id, "calls")).calls
    const cancelled = structured(yield* workers.callTool(id, "cancelled"))
    return { calls, cancelled: cancelled.cancelled, aborted: cancelled.aborted } as ServerRecords
  })

/** The JSON-RPC id the server saw for the call carrying `token`. */
const serverIdOf = (server: ServerRecords, token: string) => {
  const calls = server.calls.filter((call) => call.token === token)
  assert.strictEqual(calls.length, 1, `exactly one call with token ${token} reached the server`)
  return calls[0]!.id
}

/** Polls the server until it has seen `notifications/cancelled` for `token`'s request (and only that one). */
const expectCancelled = (workers: McpWorkers["Type"], id: string, token: string, reason: string) =>
  Effect.gen(function* () {
    let server = yield* records(workers, id)
    for (let i = 0; i < 50 && server.cancelled.length === 0; i++) {
      yield* Effect.sleep(20)
      server = yield* records(workers, id)
    }
    const requestId = serverIdOf(server, token)
    assert.deepStrictEqual(
      server.cancelled.map((c) => [c.requestId, c.reason]),
      [[requestId, reason]]
    )
    assert.deepStrictEqual(
      server.aborted.map((a) => a.requestId),
      [requestId]
    )
  })

const idle = (workers: McpWorkers["Type"], id: string) =>
  Effect.gen(function* () {
    const status = yield* workers.status(id)
    assert.isFalse(status.busy)
    assert.strictEqual(status.state, "ready")
    assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "next" })).token, "next")
  })

/** The two ways a remote thread's request reaches its owner: relayed by the host, and straight, once routed. */
const paths = ["relayed by the host", "straight to the owner thread"] as const

describe("NodeMcpWorkers.layerRemote", () => {
  it.live("a message on the host's channel that throws when it is read is dropped; the host goes on serving", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        // Anything in the process may post on the channel's well-known name.
        const channel = new BroadcastChannel(Protocol.hostChannel)
        channel.postMessage({ _tag: { toString: "" }, from: "nobody", callId: 1 })
        channel.postMessage({
          _tag: "RemoteRequest",
          from: { toString: "" },
          callId: 2,
          operation: { _tag: { toString: "" } }
        })
        channel.close()
        yield* Effect.sleep(50)
        const answer = yield* Effect.provide(
          Effect.flatMap(McpWorkers, (remote) => remote.callTool(id, "echo", { token: "after" })),
          NodeMcpWorkers.layerRemote
        )
        assert.strictEqual(structured(answer).token, "after")
      })
    )
  )

  it.live("C22: four fresh threads in sequence reuse one worker by id: the count reaches 4 in one process", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const pid = (yield* workers.status(id)).pid
        const seen: Array<{ count: number; pid: number }> = []
        for (let i = 0; i < 4; i++) {
          const outcome = yield* run("inc", { id })
          if (!outcome.ok) return assert.fail(`thread ${i} failed: ${String(outcome.error)}`)
          seen.push(outcome.value)
        }
        assert.deepStrictEqual(
          seen.map((s) => s.count),
          [1, 2, 3, 4]
        )
        assert.deepStrictEqual(
          seen.map((s) => s.pid),
          [pid, pid, pid, pid]
        )
      })
    )
  )

  it.live(
    "C8: calls in a row from two remote clients in turn are never busy, while the host is often busy itself",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          // The host's thread blocks 3 ms of every 4: the owner's word that a request ended and the remote's next
          // request then often wait side by side, and either may be read first.
          const blocker = yield* Effect.acquireRelease(
            Effect.sync(() =>
              setInterval(() => {
                const until = performance.now() + 3
                while (performance.now() < until) {
                  // busy
                }
              }, 1)
            ),
            (interval) => Effect.sync(() => clearInterval(interval))
          )
          const n = 300
          const outcome = yield* run("sequence", { id, n })
          clearInterval(blocker)
          if (!outcome.ok) return assert.fail(String(outcome.error))
          assert.deepStrictEqual(
            outcome.value,
            Array.from({ length: n }, () => "ok")
          )
        })
      )
  )

  it.live("C23: opened in a thread that then exits, used from a second, closed from a third", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const opened = yield* run("open", { config: { ...statefulConfig(), env: { TEST_TAG: t } } })
        if (!opened.ok) return assert.fail(String(opened.error))
        const id = opened.value as string
        // The opening thread has exited; the worker belongs to the host and lives on.
        const status = yield* workers.status(id)
        assert.strictEqual(status.state, "ready")
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [status.pid])

        const used = yield* run("inc", { id })
        assert.deepStrictEqual(used, { ok: true, value: { count: 1, pid: status.pid } })

        const closed = yield* run("close", { id })
        if (!closed.ok) return assert.fail(String(closed.error))
        assert.strictEqual(closed.value.state, "closed")
        assert.strictEqual(closed.value.cleanup.activeProcesses, 0)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.isFalse(isAlive(status.pid!))
        assert.strictEqual((yield* Effect.flip(workers.status(id)))._tag, "UnknownWorker")
      })
    )
  )

  it.live(
    "C22: a remote thread's calls after its first go straight to the owner thread: they end while the host is blocked",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const running = yield* remoteThread(entry(), { scenario: "whileHostBlocked", data: { id } })
          yield* Effect.promise(() => running.event("ready"))
          running.send("go")
          // This thread (the host's) reads nothing for a second.
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_000)
          const blockedUntil = Date.now()
          const outcome = yield* Effect.promise(() => running.outcome)
          if (!outcome.ok) return assert.fail(String(outcome.error))
          assert.deepStrictEqual(
            outcome.value.tokens,
            Array.from({ length: 20 }, (_, i) => `t${i}`)
          )
          assert.isBelow(outcome.value.doneAt, blockedUntil)
          // The host read every request's start and end afterwards: idle, and the server saw each call once.
          const status = yield* workers.status(id)
          assert.isFalse(status.busy)
          const server = yield* records(workers, id)
          assert.strictEqual(server.calls.filter((call) => call.name === "echo").length, 21)
        })
      )
  )

  it.live("C8: two threads racing on one worker: exactly one result and one WorkerBusy, one call at the server", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const a = yield* remoteThread(entry(), { scenario: "race", data: { id, token: "a", ms: 300 } })
        const b = yield* remoteThread(entry(), { scenario: "race", data: { id, token: "b", ms: 300 } })
        yield* Effect.promise(() => Promise.all([a.event("ready"), b.event("ready")]))
        a.send("go")
        b.send("go")
        const outcomes = yield* Effect.promise(() => Promise.all([a.outcome, b.outcome]))
        const values = outcomes.map((outcome) => (outcome.ok ? outcome.value : assert.fail(String(outcome.error))))
        const won = values.filter((value) => "ok" in value)
        const busy = values.filter((value) => value._tag === "WorkerBusy")
        assert.strictEqual(won.length, 1)
        assert.strictEqual(busy.length, 1)
        assert.strictEqual(busy[0].encoded.delivery, "not_sent")
        const server = yield* records(workers, id)
        const sleeps = server.calls.filter((call) => call.name === "sleep")
        assert.deepStrictEqual(
          sleeps.map((call) => call.token),
          [won[0].ok.token]
        )
      })
    )
  )

  it.live("C11: interrupting a remote call cancels exactly that request at the server", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        yield* workers.callTool(id, "echo", { token: "before" })
        const remote = yield* remoteThread(entry(), { scenario: "interrupt", data: { id, token: "interrupted" } })
        yield* Effect.promise(() => remote.event("busy"))
        // The host's thread is held while the remote interrupts: an interruption that waited for the host would
        // take the whole hold; one that does not returns long before it, however slow the machine.
        remote.send("go")
        const holdUntil = Date.now() + hostHoldMs
        while (Date.now() < holdUntil) {
          // held
        }
        const outcome = yield* Effect.promise(() => remote.outcome)
        if (!outcome.ok) return assert.fail(String(outcome.error))
        assert.isBelow(outcome.value.interruptMs, hostHoldMs / 2)
        // The remote's cancel reached the host during the hold; until the host reads it, the worker is busy.
        assert.isTrue(
          yield* Effect.promise(() => eventually(async () => !(await Effect.runPromise(workers.status(id))).busy))
        )
        yield* expectCancelled(workers, id, "interrupted", "interrupted")
        yield* idle(workers, id)
      })
    )
  )

  it.live.each(paths)(
    "a remote thread terminated mid-call (%s): its request is cancelled long before its budget, the worker works",
    (path) =>
      withSharedHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const direct = path === paths[1]
          const running = yield* remoteThread(entry(), { scenario: "hang", data: { id, token: "orphan", direct } })
          yield* Effect.promise(() => running.event("calling"))
          assert.isTrue(
            yield* Effect.promise(() => eventually(async () => (await Effect.runPromise(workers.status(id))).busy))
          )
          yield* Effect.promise(() => running.thread.terminate())
          const terminated = Date.now()
          // The call's budget is the default 30 s; the host notices the silent thread within a few seconds.
          const idleAgain = yield* Effect.promise(() =>
            eventually(async () => !(await Effect.runPromise(workers.status(id))).busy, 6000)
          )
          assert.isTrue(idleAgain)
          assert.isBelow(Date.now() - terminated, 5000)
          yield* expectCancelled(workers, id, "orphan", "interrupted")
          yield* idle(workers, id)
        })
      ),
    { concurrent: true }
  )

  it.live.each(paths)(
    "C11, C22: a remote whose event loop stalls past the host's patience gets DeliveryUnknown, not silence (%s)",
    (path) =>
      withSharedHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          // 4.5 s without a word: the host takes the thread for gone and cancels its call; the thread, alive after
          // all, must learn how its call ended instead of waiting for ever.
          const direct = path === paths[1]
          const outcome = yield* run("stall", { id, token: "stalled", ms: 4_500, direct })
          if (!outcome.ok) return assert.fail(String(outcome.error))
          const answer = outcome.value.answer
          assert.isNotNull(answer, "the stalled thread got no answer")
          assert.strictEqual(answer._tag, "DeliveryUnknown")
          assert.strictEqual(answer.encoded.reason, "interrupted")
          assert.match(answer.encoded.requestId, /.+/)
          // The answer was waiting for the thread when it woke up.
          assert.isBelow(outcome.value.msAfterStall, 500)
          yield* expectCancelled(workers, id, "stalled", "interrupted")
          yield* idle(workers, id)
        })
      ),
    { concurrent: true }
  )

  it.live("C11, C22: a remote waiting on a call tells the host so, even while it hears from the host side", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const running = yield* remoteThread(entry(), {
          scenario: "timedCall",
          data: { id, token: "long", ms: 4_000, timeout: 20_000 }
        })
        yield* Effect.promise(() => running.event("ready"))
        // Traffic towards the remote (here: a standby host, older than ours, announcing itself) must not stand in
        // for the remote's own sign of life, which is all the host goes by.
        const announce = yield* Effect.acquireRelease(
          Effect.sync(() => new BroadcastChannel(Protocol.announceChannel)),
          (channel) => Effect.sync(() => channel.close())
        )
        const flood = yield* Effect.acquireRelease(
          Effect.sync(() =>
            setInterval(() => announce.postMessage({ _tag: "Up", hostId: "standby", startedAt: 0 }), 200)
          ),
          (interval) => Effect.sync(() => clearInterval(interval))
        )
        running.send("go")
        const outcome = yield* Effect.promise(() => running.outcome).pipe(Effect.timeout("8 seconds"), Effect.orDie)
        clearInterval(flood)
        if (!outcome.ok) return assert.fail(String(outcome.error))
        assert.isNull(outcome.value.error, JSON.stringify(outcome.value.error))
        assert.strictEqual(outcome.value.result.token, "long")
      })
    )
  )

  it.live("C9: a remote request's budget counts the hops: a host that reads it late has only what is left", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const running = yield* remoteThread(entry(), {
          scenario: "timedCall",
          data: { id, token: "late", ms: 10_000, timeout: 1_000 }
        })
        yield* Effect.promise(() => running.event("ready"))
        running.send("go")
        // This thread, the host's, is busy for 800 ms: the request waits in its queue while its budget runs.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 800)
        const outcome = yield* Effect.promise(() => running.outcome)
        if (!outcome.ok) return assert.fail(String(outcome.error))
        assert.strictEqual(outcome.value.error?._tag, "DeliveryUnknown")
        assert.strictEqual(outcome.value.error.encoded.reason, "timeout")
        assert.isAtLeast(outcome.value.ms, 990)
        assert.isBelow(outcome.value.ms, 1200)
        // The host's own timer ended it (a cancel for "timeout"), with only the 200 ms left of the budget.
        yield* expectCancelled(workers, id, "late", "timeout")
        yield* idle(workers, id)
      })
    )
  )

  it.live("C22: with no host in the process, every remote call fails within 1 s with HostUnavailable", () =>
    Effect.gen(function* () {
      const t = tag()
      const outcome = yield* run("noHost", {
        id: "mcpw_AAAAAAAAAAAAAAAAAAAAAA",
        config: { ...statefulConfig(), env: { TEST_TAG: t } }
      })
      if (!outcome.ok) return assert.fail(String(outcome.error))
      for (const name of ["status", "callTool", "open"]) {
        const result = outcome.value[name]
        assert.strictEqual(result.tag, "HostUnavailable", name)
        assert.isBelow(result.ms, 1000, name)
        assert.include(result.message, "NodeMcpWorkers.layer()")
      }
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
    })
  )

  it.scopedLive(
    "host layer closed while a remote holds an id: its call in flight ends, later calls get UnknownWorker",
    () =>
      Effect.gen(function* () {
        const hostScope = yield* Effect.acquireRelease(Scope.make(), (scope) => Scope.close(scope, Exit.void))
        const workers = Context.get(yield* Layer.buildWithScope(NodeMcpWorkers.layer(), hostScope), McpWorkers)
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
        const running = yield* remoteThread(entry(), {
          scenario: "holdAcrossHostClose",
          data: { id, config: statefulConfig() }
        })
        yield* Effect.promise(() => running.event("ready"))
        yield* Scope.close(hostScope, Exit.void)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        running.send("go")
        const outcome = yield* Effect.promise(() => running.outcome)
        if (!outcome.ok) return assert.fail(String(outcome.error))
        const value = outcome.value
        assert.strictEqual(value.before, 1)
        // The request in flight ends as it does for a local caller when its worker is closed.
        assert.strictEqual(value.pending._tag, "DeliveryUnknown")
        assert.strictEqual(value.pending.encoded.reason, "interrupted")
        assert.strictEqual(value.call._tag, "UnknownWorker")
        assert.strictEqual(value.status._tag, "UnknownWorker")
        assert.strictEqual(value.open._tag, "HostUnavailable")
        // The host announced that it closed: nothing waits for a no-answer timer.
        assert.isBelow(value.ms, 200)
      })
  )

  it.scopedLive(
    "a host thread that vanishes without closing: a call in flight is DeliveryUnknown, a new one HostUnavailable",
    () =>
      Effect.gen(function* () {
        const t = tag()
        // Terminating a thread runs none of its finalizers: the host's server process is orphaned, and ended here.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const pid of processesWithEnv("TEST_TAG", t)) process.kill(pid, "SIGKILL")
          })
        )
        const host = yield* remoteThread(entry(), {
          scenario: "host",
          data: { config: { ...statefulConfig(), env: { TEST_TAG: t } } }
        })
        const id = (yield* Effect.promise(() => host.event("opened"))) as string
        const mcp = yield* Effect.acquireRelease(
          Effect.sync(() => makePromiseClient()),
          (client) => Effect.promise(() => client.dispose())
        )
        const call = mcp.callTool(id, "sleep", { ms: 30_000 }).then(
          () => assert.fail("the call cannot succeed"),
          (error: unknown) => error
        )
        while (!(yield* Effect.promise(() => mcp.status(id))).busy) yield* Effect.sleep(5)
        yield* Effect.promise(() => host.thread.terminate())
        const terminated = Date.now()
        const error = yield* Effect.promise(() => call)
        // The host took the call and sent it before it vanished: its outcome is unknown, not "no host" (C22a).
        assert.instanceOf(error, DeliveryUnknown)
        assert.deepInclude(error, { workerId: id, reason: "host_unresponsive", delivery: "unknown" })
        // Pings go out after 1.5 s of silence, and get 2 s to be answered.
        assert.isBelow(Date.now() - terminated, 4500)
        const started = Date.now()
        assert.instanceOf(yield* Effect.promise(() => mcp.status(id).catch((e: unknown) => e)), HostUnavailable)
        assert.isBelow(Date.now() - started, 1000)
      })
  )

  it.live("C18: envFrom is resolved in the remote thread's environment, not the host's", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const name = `MCPW_REMOTE_${tag()}`
        assert.isUndefined(process.env[name])
        const env = { ...(process.env as Record<string, string>), [name]: "from-the-remote-thread" }
        const outcome = yield* run("envFrom", { config: statefulConfig(), name }, env)
        assert.deepStrictEqual(outcome, {
          ok: true,
          value: { value: "from-the-remote-thread", here: "from-the-remote-thread" }
        })
        // The same config opened here, where the variable is not set, is refused.
        const refused = yield* Effect.flip(workers.open({ ...statefulConfig(), envFrom: [name] }))
        assert.strictEqual(refused._tag, "InvalidInput")
        assert.isUndefined(process.env[name])
      })
    )
  )

  it.live("C22: errors cross threads as the same tagged error classes, with the same message", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        yield* workers.close(id)
        const outcome = yield* run("errorClasses", { id })
        assert.deepStrictEqual(outcome, {
          ok: true,
          value: { instance: true, sameMessage: true, tag: "UnknownWorker" }
        })
        // A failure of the scenario itself comes back here as an instance too (encoded there, decoded here).
        const failed = yield* run("close", { id })
        assert.isFalse(failed.ok)
        if (!failed.ok) {
          assert.instanceOf(failed.error, UnknownWorker)
          assert.strictEqual((failed.error as UnknownWorker).message, new UnknownWorker({ workerId: id }).message)
        }
      })
    )
  )

  it.live("an idle remote never keeps its thread alive, even with a Promise client that was never disposed", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const outcome = yield* run("promiseClient", { id })
        assert.deepStrictEqual(outcome, {
          ok: true,
          value: { count: 1, error: { instance: true, tag: "UnknownWorker" } }
        })
      })
    )
  )
})
