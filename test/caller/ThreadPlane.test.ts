// The thread plane against a real host in this thread and a real fixture server: the answers of the Effect remote
// client, without Effect on the caller's side (C106).
import { assert, describe, it } from "@effect/vitest"
import { DeliveryUnknown, HostUnavailable, UnknownWorker, WorkerBusy } from "@mcp-worker/caller/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Plane from "@mcp-worker/caller/Plane"
import * as ThreadPlane from "../../packages/caller/src/internal/thread/index.js"
import { statefulConfig } from "../fixtures/servers.js"

const structured = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent

const rejection = (promise: Promise<unknown>): Promise<any> =>
  promise.then(
    (value) => assert.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error
  )

const call = (workerId: string, name: string, args: object, more: Partial<Plane.Call> = {}) => ({
  workerId,
  method: "tools/call",
  params: JSON.stringify({ name, arguments: args }),
  budgetMs: undefined,
  ...more
})

const withHost = (body: (plane: ReturnType<typeof ThreadPlane.make>, id: string) => Promise<void>) =>
  Effect.promise(async () => {
    const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
    const plane = ThreadPlane.make()
    try {
      const id = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.open(statefulConfig())))
      await body(plane, id)
    } finally {
      await plane.dispose()
      await runtime.dispose()
    }
  })

describe("the thread plane", () => {
  it.live("relays the first request, goes straight to the owner after; busy, budget, abort, status, close", () =>
    withHost(async (plane, id) => {
      // The first call goes through the host, which gives the route; the next go to the owner thread.
      for (let by = 1; by <= 3; by++)
        assert.strictEqual(structured((await plane.request(call(id, "inc", {}))) as any).count, by)
      const slow = plane.request(call(id, "sleep", { ms: 400, token: "first" }))
      let status = await plane.status(id)
      for (let i = 0; i < 100 && !status.busy; i++) status = await plane.status(id)
      const busy = await rejection(plane.request(call(id, "echo", { token: "second" })))
      assert.instanceOf(busy, WorkerBusy)
      assert.strictEqual(busy.delivery, "not_sent")
      assert.strictEqual(busy.requestId, status.requestId)
      assert.strictEqual(structured((await slow) as any).token, "first")

      const started = Date.now()
      const timedOut = await rejection(plane.request(call(id, "sleep", { ms: 10_000 }, { budgetMs: 200 })))
      assert.instanceOf(timedOut, DeliveryUnknown)
      assert.strictEqual(timedOut.reason, "timeout")
      assert.isBelow(Date.now() - started, 1_500)

      const controller = new AbortController()
      const aborted = plane.request(call(id, "sleep", { ms: 10_000 }, { signal: controller.signal }))
      for (let i = 0; i < 100 && !(await plane.status(id)).busy; i++);
      controller.abort()
      const interrupted = await rejection(aborted)
      assert.instanceOf(interrupted, DeliveryUnknown)
      assert.strictEqual(interrupted.reason, "interrupted")

      const before = new AbortController()
      before.abort(new Error("before"))
      assert.strictEqual(
        await rejection(plane.request(call(id, "echo", {}, { signal: before.signal }))),
        before.signal.reason
      )

      const progress: Array<number> = []
      const done = await plane.request({
        ...call(id, "progress", { steps: 3 }),
        onProgress: (p) => progress.push(p.progress)
      })
      assert.deepStrictEqual(structured(done as any), { steps: 3, hadToken: true })
      assert.deepStrictEqual(progress, [1, 2, 3])

      assert.instanceOf(await rejection(plane.status("mcpw_AAAAAAAAAAAAAAAAAAAAAA")), UnknownWorker)
      const closed = await plane.close(id, 5_000)
      assert.strictEqual(closed.state, "closed")
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    })
  )

  it.live("events: a subscription's notifications in order; leaving unsubscribes", () =>
    withHost(async (plane, id) => {
      const events = plane.events(id, 16)
      await plane.request(call(id, "notify", { methods: ["notifications/message"], count: 2 }))
      const first = await events.next()
      const second = await events.next()
      assert.deepStrictEqual([first.value?.params.data, second.value?.params.data], ["line 0", "line 1"])
      await events.return!()
      assert.deepStrictEqual(await events.next(), { done: true, value: undefined })
      const unknown = plane.events("mcpw_AAAAAAAAAAAAAAAAAAAAAA", 16)
      assert.instanceOf(await rejection(unknown.next()), UnknownWorker)
    })
  )

  it.live("C22: with no host, a call is HostUnavailable within 1 s", () =>
    Effect.promise(async () => {
      const plane = ThreadPlane.make()
      try {
        const started = Date.now()
        const error = await rejection(plane.request(call("mcpw_AAAAAAAAAAAAAAAAAAAAAA", "inc", {})))
        assert.instanceOf(error, HostUnavailable)
        assert.strictEqual(error.delivery, "not_sent")
        assert.isBelow(Date.now() - started, 1_000)
      } finally {
        await plane.dispose()
      }
    })
  )
})
