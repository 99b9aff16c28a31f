// makePromiseClient: the six operations as Promises, rejecting with the core error classes. These tests run it in
// the host's own thread (it always takes the remote path); Remote.test.ts runs it in other threads.
import { assert, describe, it } from "@effect/vitest"
import {
  CloseFailed,
  DeliveryUnknown,
  HostUnavailable,
  InvalidInput,
  OpenFailed,
  RequestNotPending,
  ServerError,
  UnknownWorker,
  WorkerBusy,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers, type PromiseClient } from "@mcp-worker/node"
import * as ProcessJob from "@mcp-worker/node/ProcessJob"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { getEventListeners } from "node:events"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"
import { statefulConfig } from "../fixtures/servers.js"
import { processesWithEnv, structured, tag } from "./helpers.js"

type Workers = McpWorkers["Type"]

/** Runs `body` with a host layer in this thread and a Promise client; disposes both, whatever happens. */
const withClient = (
  body: (mcp: PromiseClient.PromiseClient, workers: Workers) => Promise<void>,
  layer: Layer.Layer<McpWorkers> = NodeMcpWorkers.layer()
) =>
  Effect.promise(async () => {
    const runtime = ManagedRuntime.make(layer)
    const mcp = makePromiseClient()
    try {
      await body(mcp, await runtime.runPromise(McpWorkers))
    } finally {
      await mcp.dispose()
      await runtime.dispose()
    }
  })

/** The rejection of `promise`, which must reject. */
const rejection = async (promise: Promise<unknown>): Promise<any> =>
  promise.then(
    (value) => assert.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error
  )

/** Polls `status` until the worker is busy; returns the request id in flight. */
const inFlight = async (mcp: PromiseClient.PromiseClient, id: string): Promise<string> => {
  for (let i = 0; i < 200; i++) {
    const status = await mcp.status(id)
    if (status.busy && status.requestId !== null) return status.requestId
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return assert.fail("the worker never became busy")
}

/** What the server saw: the JSON-RPC id of the call carrying `token`, and every cancellation. */
const serverSide = async (mcp: PromiseClient.PromiseClient, id: string, token: string) => {
  const calls = structured(await mcp.callTool(id, "calls")).calls as Array<{ id: number; token?: string }>
  const cancelled = structured(await mcp.callTool(id, "cancelled")).cancelled as Array<{
    requestId: number
    reason: string
  }>
  return { ids: calls.filter((call) => call.token === token).map((call) => call.id), cancelled }
}

describe("makePromiseClient", () => {
  it.live("every operation, from the host's own thread", () =>
    withClient(async (mcp, workers) => {
      const t = tag()
      const id = await mcp.open({ ...statefulConfig(), env: { TEST_TAG: t } }, { timeout: "10 seconds" })
      assert.match(id, /^mcpw_/)
      const tools = await mcp.listTools(id, { timeout: 5_000 })
      assert.includeMembers(
        tools.tools.map((tool) => tool.name),
        ["inc", "echo", "sleep"]
      )
      assert.strictEqual(structured(await mcp.callTool(id, "inc", { by: 2 })).count, 2)
      // The same worker, seen through the Effect API of the host.
      assert.strictEqual(structured(await Effect.runPromise(workers.callTool(id, "inc"))).count, 3)

      const status = await mcp.status(id)
      assert.strictEqual(status.state, "ready")
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [status.pid])

      const sleeping = mcp.callTool(id, "sleep", { ms: 10_000, token: "cancel-me" })
      const requestId = await inFlight(mcp, id)
      assert.isUndefined(await mcp.cancel(id, requestId))
      const cancelled = await rejection(sleeping)
      assert.instanceOf(cancelled, DeliveryUnknown)
      assert.deepInclude(cancelled, { workerId: id, requestId, reason: "cancelled", delivery: "unknown" })

      const closed = await mcp.close(id, { timeout: 5_000 })
      assert.strictEqual(closed.state, "closed")
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
    })
  )

  it.live("request errors reject as instances of the core classes, with their fields and message", () =>
    withClient(async (mcp) => {
      const id = await mcp.open(statefulConfig())

      const unknown = await rejection(mcp.callTool("mcpw_AAAAAAAAAAAAAAAAAAAAAA", "inc"))
      assert.instanceOf(unknown, UnknownWorker)
      assert.strictEqual(unknown._tag, "UnknownWorker")
      assert.strictEqual(unknown.message, new UnknownWorker({ workerId: "mcpw_AAAAAAAAAAAAAAAAAAAAAA" }).message)

      const slow = mcp.callTool(id, "sleep", { ms: 300, token: "first" })
      const requestId = await inFlight(mcp, id)
      const busy = await rejection(mcp.callTool(id, "echo", { token: "second" }))
      assert.instanceOf(busy, WorkerBusy)
      assert.deepInclude(busy, { workerId: id, requestId, delivery: "not_sent" })
      assert.strictEqual(busy.message, new WorkerBusy({ workerId: id, requestId, delivery: "not_sent" }).message)
      assert.strictEqual(structured(await slow).token, "first")

      for (const timeout of [150, "150 millis"]) {
        const started = Date.now()
        const timedOut = await rejection(mcp.callTool(id, "sleep", { ms: 10_000 }, { timeout }))
        assert.instanceOf(timedOut, DeliveryUnknown)
        assert.strictEqual(timedOut.reason, "timeout")
        assert.isAtLeast(Date.now() - started, 145)
        assert.isBelow(Date.now() - started, 1000)
      }

      const server = await rejection(mcp.callTool(id, "rpc_error", { code: -32602 }))
      assert.instanceOf(server, ServerError)
      assert.strictEqual(server.code, -32602)
      assert.deepStrictEqual(server.data, { detail: "x" })
      assert.include(server.message, "rpc error on purpose")

      const badArgs = await rejection(mcp.callTool(id, "echo", { token: (() => "x") as any }))
      assert.instanceOf(badArgs, InvalidInput)
      assert.deepInclude(badArgs, { where: "arguments", path: "args.token", delivery: "not_sent" })
      const badTimeout = await rejection(mcp.callTool(id, "echo", { token: "x" }, { timeout: "soon" }))
      assert.instanceOf(badTimeout, InvalidInput)
      assert.strictEqual(badTimeout.path, "options.timeout")

      const stale = await rejection(mcp.cancel(id, "req_stale"))
      assert.instanceOf(stale, RequestNotPending)
      assert.strictEqual(stale.message, new RequestNotPending({ workerId: id, requestId: "req_stale" }).message)

      const died = await rejection(mcp.callTool(id, "exit", { code: 3 }))
      assert.instanceOf(died, WorkerFailed)
      assert.strictEqual(died.delivery, "unknown")
      const later = await rejection(mcp.callTool(id, "echo", { token: "after" }))
      assert.instanceOf(later, WorkerFailed)
      assert.strictEqual(later.delivery, "not_sent")
      assert.strictEqual((await mcp.close(id)).cleanup?.activeProcesses, 0)
    })
  )

  it.live("open and close errors reject as instances of the core classes", () => {
    let claimSurvivor = false
    // The tree really ends, but while armed the host's confirmation also counts this process, which no stop signals.
    const survivor = ProcessJob.layerCleanupScanTest({
      scan: (marker, pgid) =>
        Effect.map(ProcessJob.scan(marker, pgid), (pids) => (claimSurvivor ? [...pids, process.pid] : pids))
    })
    return withClient(
      async (mcp) => {
        const badConfig = await rejection(mcp.open({ command: 42 } as any))
        assert.instanceOf(badConfig, InvalidInput)
        assert.strictEqual(badConfig.where, "config")

        const missing = await rejection(mcp.open({ command: "/nonexistent/mcp-server-binary" }))
        assert.instanceOf(missing, OpenFailed)
        assert.strictEqual(missing.stage, "spawn")

        const id = await mcp.open(statefulConfig())
        claimSurvivor = true
        // A survivor is waited for until the budget is spent: a short one keeps the test short.
        const unconfirmed = await rejection(mcp.close(id, { timeout: "2 seconds" }))
        claimSurvivor = false
        assert.instanceOf(unconfirmed, CloseFailed)
        assert.strictEqual(unconfirmed.workerId, id)
        assert.strictEqual(unconfirmed.cleanup.activeProcesses, 1)
        assert.strictEqual((await mcp.close(id)).cleanup?.activeProcesses, 0)
        assert.instanceOf(await rejection(mcp.close(id)), UnknownWorker)
      },
      NodeMcpWorkers.layer().pipe(Layer.provide(survivor))
    )
  })

  it.live("AbortSignal: aborting cancels exactly that request and rejects with DeliveryUnknown{interrupted}", () =>
    withClient(async (mcp) => {
      const id = await mcp.open(statefulConfig())
      const controller = new AbortController()
      const call = mcp.callTool(id, "sleep", { ms: 10_000, token: "aborted" }, { signal: controller.signal })
      const requestId = await inFlight(mcp, id)
      const aborted = Date.now()
      controller.abort()
      const error = await rejection(call)
      assert.isBelow(Date.now() - aborted, 200)
      assert.instanceOf(error, DeliveryUnknown)
      assert.deepInclude(error, { workerId: id, requestId, reason: "interrupted", delivery: "unknown" })
      assert.lengthOf(getEventListeners(controller.signal, "abort"), 0)

      const { ids, cancelled } = await serverSide(mcp, id, "aborted")
      assert.deepStrictEqual(
        cancelled.map((c) => [c.requestId, c.reason]),
        [[ids[0], "interrupted"]]
      )
      assert.isFalse((await mcp.status(id)).busy)

      // A signal that is never aborted leaves no listener behind once its call is done.
      const unused = new AbortController()
      await mcp.callTool(id, "echo", { token: "kept" }, { signal: unused.signal })
      await mcp.listTools(id, { signal: unused.signal })
      assert.lengthOf(getEventListeners(unused.signal, "abort"), 0)

      // Already aborted: nothing is sent, and the rejection is the signal's reason.
      const before = new AbortController()
      before.abort(new Error("stopped before"))
      const refused = await rejection(mcp.callTool(id, "echo", { token: "never" }, { signal: before.signal }))
      assert.strictEqual(refused, before.signal.reason)
      assert.deepStrictEqual((await serverSide(mcp, id, "never")).ids, [])
    })
  )

  it.live("C11: a signal aborted right after the call, before the request left this thread, sends nothing", () =>
    withClient(async (mcp) => {
      const id = await mcp.open(statefulConfig())
      for (const operation of ["callTool", "listTools"] as const) {
        // A fresh client builds its runtime on its first call: the request leaves this thread only a moment later.
        const fresh = makePromiseClient()
        try {
          const controller = new AbortController()
          const { signal } = controller
          const call =
            operation === "callTool"
              ? fresh.callTool(id, "sleep", { ms: 2_000, token: "abort-at-once" }, { signal })
              : fresh.listTools(id, { signal })
          controller.abort(new Error("stopped at once"))
          const started = Date.now()
          assert.strictEqual(await rejection(call), signal.reason, operation)
          assert.isBelow(Date.now() - started, 200)
          assert.lengthOf(getEventListeners(signal, "abort"), 0)
        } finally {
          await fresh.dispose()
        }
      }
      assert.isFalse((await mcp.status(id)).busy)
      assert.deepStrictEqual((await serverSide(mcp, id, "abort-at-once")).ids, [])
    })
  )

  it.live(
    "C9: timeouts that are not non-negative durations are InvalidInput; longer ones than a timer holds are clamped",
    () =>
      withClient(async (mcp) => {
        const id = await mcp.open(statefulConfig())
        // Duration reads NaN, negative numbers and negative durations as zero: they must not become "no time at all".
        for (const timeout of [Number.NaN, -5, -0.5, "soon", "-5 millis", [-1, 0], {}]) {
          const label = JSON.stringify(timeout)
          for (const request of [
            () => mcp.callTool(id, "echo", { token: "bad-timeout" }, { timeout: timeout as any }),
            () => mcp.listTools(id, { timeout: timeout as any })
          ]) {
            const error = await rejection(request())
            assert.instanceOf(error, InvalidInput, label)
            assert.deepInclude(error, { where: "arguments", path: "options.timeout", delivery: "not_sent" }, label)
          }
          const open = await rejection(mcp.open(statefulConfig(), { timeout: timeout as any }))
          assert.instanceOf(open, InvalidInput, label)
          assert.deepInclude(open, { where: "config", path: "options.timeout" }, label)
        }
        assert.deepStrictEqual((await serverSide(mcp, id, "bad-timeout")).ids, [])
        for (const timeout of [Number.POSITIVE_INFINITY, 2 ** 40, "30 days"]) {
          const result = await mcp.callTool(id, "echo", { token: "long-budget" }, { timeout: timeout as any })
          assert.strictEqual(structured(result).token, "long-budget", String(timeout))
        }
      })
  )

  it.live("C9: a host that acknowledges but never answers cannot hold a caller past the call's budget", () =>
    Effect.promise(async () => {
      // A stand-in host: it confirms every message that asks for it and answers nothing.
      const seen: Array<any> = []
      const replies: Array<BroadcastChannel> = []
      const host = new BroadcastChannel(Protocol.hostChannel)
      host.onmessage = (event: MessageEvent) => {
        const message = event.data
        seen.push({ ...message, at: Date.now() })
        if (message._tag === "Ping" || message.ackBy !== undefined) {
          const channel = new BroadcastChannel(message.from)
          replies.push(channel)
          channel.postMessage({ _tag: "Ack", hostId: "silent", callId: message.callId })
        }
      }
      const mcp = makePromiseClient()
      try {
        const workerId = "mcpw_AAAAAAAAAAAAAAAAAAAAAA"
        const started = Date.now()
        const error = await rejection(
          Promise.race([
            mcp.callTool(workerId, "sleep", { ms: 10_000 }, { timeout: 300 }),
            new Promise((resolve) => setTimeout(resolve, 3_000, "still waiting after 3 s"))
          ])
        )
        const ms = Date.now() - started
        assert.instanceOf(error, DeliveryUnknown)
        assert.deepInclude(error, { workerId, reason: "timeout", delivery: "unknown" })
        assert.isAtLeast(ms, 300)
        assert.isBelow(ms, 1000)
        const request = seen.find((message) => message._tag === "RemoteRequest")
        // The request carried its absolute deadline, and the caller told the host it stopped waiting.
        assert.approximately(request.operation.deadline, started + 300, 50)
        const interrupts = () => seen.filter((message) => message._tag === "Interrupt")
        for (let i = 0; i < 50 && interrupts().length === 0; i++) await new Promise((r) => setTimeout(r, 10))
        assert.deepStrictEqual(
          interrupts().map((message) => [message.callId, message.reply]),
          [[request.callId, false]]
        )
      } finally {
        await mcp.dispose()
        host.close()
        for (const channel of replies) channel.close()
      }
    })
  )

  it.live("dispose interrupts the calls in flight (their requests are cancelled); other clients are unaffected", () =>
    withClient(async (mcp) => {
      const id = await mcp.open(statefulConfig())
      const other = makePromiseClient()
      const call = other.callTool(id, "sleep", { ms: 10_000, token: "disposed" })
      await inFlight(mcp, id)
      await other[Symbol.asyncDispose]()
      const error = await rejection(call)
      assert.strictEqual(error.name, "AbortError")
      assert.strictEqual((await rejection(other.status(id))).name, "AbortError")
      for (let i = 0; i < 50 && (await mcp.status(id)).busy; i++) await new Promise((r) => setTimeout(r, 10))
      const { ids, cancelled } = await serverSide(mcp, id, "disposed")
      assert.deepStrictEqual(
        cancelled.map((c) => [c.requestId, c.reason]),
        [[ids[0], "interrupted"]]
      )
      assert.strictEqual(structured(await mcp.callTool(id, "echo", { token: "still" })).token, "still")
    })
  )

  it.live(
    "the host closes with a remote call in flight: it rejects with DeliveryUnknown{interrupted}, tree ended",
    () =>
      Effect.promise(async () => {
        const t = tag()
        const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
        const mcp = makePromiseClient()
        try {
          const workers = await runtime.runPromise(McpWorkers)
          const id = await mcp.open({ ...statefulConfig(), env: { TEST_TAG: t } })
          const call = mcp.callTool(id, "sleep", { ms: 30_000, token: "host-closed" })
          const requestId = await inFlight(mcp, id)
          // The request reached the server: its outcome is unknown once the host ends it.
          assert.strictEqual((await Effect.runPromise(workers.status(id))).requestId, requestId)
          const closing = runtime.dispose()
          const error = await rejection(call)
          await closing
          assert.instanceOf(error, DeliveryUnknown)
          assert.deepInclude(error, { workerId: id, requestId, reason: "interrupted", delivery: "unknown" })
          assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
          // Closed with the host: the id is forgotten.
          assert.instanceOf(await rejection(mcp.status(id)), UnknownWorker)
        } finally {
          await mcp.dispose()
          await runtime.dispose()
        }
      })
  )

  it.live("C22: with no host, every operation rejects with HostUnavailable within 1 s", () =>
    Effect.promise(async () => {
      const mcp = makePromiseClient()
      try {
        for (const operation of [
          () => mcp.status("mcpw_AAAAAAAAAAAAAAAAAAAAAA"),
          () => mcp.callTool("mcpw_AAAAAAAAAAAAAAAAAAAAAA", "inc"),
          () => mcp.open(statefulConfig())
        ]) {
          const started = Date.now()
          const error = await rejection(operation())
          assert.isBelow(Date.now() - started, 1000)
          assert.instanceOf(error, HostUnavailable)
          assert.include(error.message, "NodeMcpWorkers.layer()")
        }
      } finally {
        await mcp.dispose()
      }
    })
  )

  it.live("two hosts in one process: only the newest serves remotes; the older takes over when it closes", () =>
    Effect.promise(async () => {
      const older = ManagedRuntime.make(NodeMcpWorkers.layer())
      const newer = ManagedRuntime.make(NodeMcpWorkers.layer())
      const mcp = makePromiseClient()
      try {
        const a = await older.runPromise(Effect.flatMap(McpWorkers, (w) => w.open(statefulConfig())))
        const b = await newer.runPromise(Effect.flatMap(McpWorkers, (w) => w.open(statefulConfig())))
        const answers = async (id: string) =>
          mcp.status(id).then(
            (status) => status.state,
            (error: { _tag: string }) => error._tag
          )
        const until = async (check: () => Promise<boolean>) => {
          for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10))
          return check()
        }
        assert.isTrue(await until(async () => (await answers(b)) === "ready"))
        assert.strictEqual(await answers(a), "UnknownWorker")
        await newer.dispose()
        assert.isTrue(await until(async () => (await answers(a)) === "ready"))
        assert.strictEqual(await answers(b), "UnknownWorker")
      } finally {
        await mcp.dispose()
        await newer.dispose()
        await older.dispose()
      }
    })
  )
})
