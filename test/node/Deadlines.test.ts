import { assert, describe, it } from "@effect/vitest"
import type { McpWorkersService } from "@mcp-worker/core/McpWorkers"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fc from "fast-check"
import { statefulConfig } from "../fixtures/servers.js"
import { structured, withHost } from "./helpers.js"

/** The JSON-RPC id under which the server received the call carrying `token`. */
const jsonRpcIdOf = (workers: McpWorkersService, id: string, token: string) =>
  Effect.map(workers.callTool(id, "calls"), (result) => {
    const calls = structured(result).calls as Array<{ id: number; token?: string }>
    const found = calls.filter((call) => call.token === token)
    assert.strictEqual(found.length, 1, `exactly one call carried ${token}`)
    return found[0]!.id
  })

const cancelledIds = (workers: McpWorkersService, id: string) =>
  Effect.map(workers.callTool(id, "cancelled"), (result) =>
    (structured(result).cancelled as Array<{ requestId: number }>).map((entry) => entry.requestId)
  )

/** Waits until the worker reports a request in flight and returns its id. */
const inFlight = (workers: McpWorkersService, id: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200; i++) {
      const status = yield* workers.status(id)
      if (status.requestId !== null) return status.requestId
      yield* Effect.sleep(5)
    }
    return assert.fail("no request went in flight")
  })

describe("deadlines and cancellation", () => {
  it.live("C11: interrupting the caller's fiber cancels exactly that request at the server", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const fiber = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 5000, token: "interrupted" }))
        yield* inFlight(workers, id)
        const exit = yield* Fiber.interrupt(fiber)
        assert.isTrue(Exit.isInterrupted(exit))
        assert.isFalse((yield* workers.status(id)).busy)
        // An Effect.timeout around the call is an interruption too.
        const timedOut = yield* workers
          .callTool(id, "sleep", { ms: 5000, token: "wrapped" })
          .pipe(Effect.timeout("100 millis"), Effect.flip)
        assert.strictEqual(timedOut._tag, "TimeoutException")
        const first = yield* jsonRpcIdOf(workers, id, "interrupted")
        const second = yield* jsonRpcIdOf(workers, id, "wrapped")
        assert.deepStrictEqual(yield* cancelledIds(workers, id), [first, second])
        assert.strictEqual((yield* workers.status(id)).state, "ready")
      })
    )
  )

  it.live("C12: a wrong, old or foreign requestId gives RequestNotPending and leaves the request alone", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const [a, b] = yield* Effect.all([workers.open(statefulConfig()), workers.open(statefulConfig())], {
          concurrency: 2
        })
        // An old id: the request finished.
        const done = yield* Effect.fork(workers.callTool(a, "sleep", { ms: 100, token: "old" }))
        const oldId = yield* inFlight(workers, a)
        yield* Fiber.join(done)
        const fa = yield* Effect.fork(workers.callTool(a, "sleep", { ms: 400, token: "a" }))
        const fb = yield* Effect.fork(workers.callTool(b, "sleep", { ms: 400, token: "b" }))
        yield* inFlight(workers, a)
        const foreign = yield* inFlight(workers, b)
        for (const bad of [oldId, foreign, "req_AAAAAAAAAAAAAAAA", ""]) {
          const error = yield* Effect.flip(workers.cancel(a, bad))
          assert.strictEqual(error._tag, "RequestNotPending")
        }
        assert.strictEqual(structured(yield* Fiber.join(fa)).token, "a")
        assert.strictEqual(structured(yield* Fiber.join(fb)).token, "b")
        assert.deepStrictEqual(yield* cancelledIds(workers, a), [])
        assert.deepStrictEqual(yield* cancelledIds(workers, b), [])
      })
    )
  )

  it.live("C9: the config's timeoutMs is the default budget; a per-call timeout overrides it", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        // The config's timeoutMs is also open's default budget: give open its own, so a busy machine cannot
        // spend those 200 ms on starting the thread and the server.
        const id = yield* workers.open({ ...statefulConfig(), timeoutMs: 200 }, { timeout: "20 seconds" })
        const started = Date.now()
        const error = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 3000 }))
        assert.strictEqual(error._tag, "DeliveryUnknown")
        // Well under the 3 s the tool sleeps: the 200 ms budget ended it, not the tool and not the 30 s default.
        assert.isBelow(Date.now() - started, 1500)
        const result = yield* workers.callTool(id, "sleep", { ms: 400, token: "longer" }, { timeout: "1 second" })
        assert.strictEqual(structured(result).token, "longer")
      })
    )
  )

  it.live("C13: a late response to a timed-out request is dropped and never answers a later request", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const error = yield* Effect.flip(workers.callTool(id, "late", { ms: 200, token: "late" }, { timeout: 50 }))
        assert.strictEqual(error._tag, "DeliveryUnknown")
        // The late answer arrives while this request is in flight: it must not become its result.
        const next = yield* workers.callTool(id, "sleep", { ms: 400, token: "mine" })
        assert.strictEqual(structured(next).token, "mine")
        const status = yield* workers.status(id)
        assert.strictEqual(status.state, "ready")
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "still" })).token, "still")
      })
    )
  )

  it.live("close while a request is in flight: the request ends as DeliveryUnknown(interrupted)", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const fiber = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 5000 }))
        yield* inFlight(workers, id)
        const closed = yield* workers.close(id)
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual(error._tag, "DeliveryUnknown")
        if (error._tag === "DeliveryUnknown") assert.strictEqual(error.reason, "interrupted")
      })
    )
  )

  it.live("status while busy answers at once with the in-flight requestId", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const fiber = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 500 }))
        const requestId = yield* inFlight(workers, id)
        const started = performance.now()
        const status = yield* workers.status(id)
        assert.isBelow(performance.now() - started, 20)
        assert.isTrue(status.busy)
        assert.strictEqual(status.requestId, requestId)
        assert.match(requestId, /^req_/)
        yield* Fiber.join(fiber)
        assert.isNull((yield* workers.status(id)).requestId)
      })
    )
  )

  it.live(
    "property: under random calls, timeouts, interrupts, cancels and races, every outcome is its own",
    () =>
      Effect.promise(async () => {
        const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
        try {
          const workers = await runtime.runPromise(McpWorkers)
          const id = await runtime.runPromise(workers.open(statefulConfig()))
          let counter = 0
          type Op =
            | { readonly kind: "call"; readonly ms: number; readonly timeout: number | undefined }
            | { readonly kind: "interrupt"; readonly ms: number; readonly after: number }
            | { readonly kind: "cancel"; readonly ms: number }
            | { readonly kind: "race"; readonly ms: number }
          const op: fc.Arbitrary<Op> = fc.oneof(
            fc.record({
              kind: fc.constant("call" as const),
              ms: fc.integer({ min: 0, max: 15 }),
              timeout: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined })
            }),
            fc.record({
              kind: fc.constant("interrupt" as const),
              ms: fc.integer({ min: 0, max: 15 }),
              after: fc.integer({ min: 0, max: 10 })
            }),
            fc.record({ kind: fc.constant("cancel" as const), ms: fc.integer({ min: 5, max: 20 }) }),
            fc.record({ kind: fc.constant("race" as const), ms: fc.integer({ min: 0, max: 10 }) })
          )
          const call = (token: string, ms: number, timeout?: number) =>
            workers.callTool(id, "sleep", { ms, token }, timeout === undefined ? {} : { timeout })
          // Each outcome is this call's own result, WorkerBusy or DeadlineExceeded (not sent: a 1 ms budget can be
          // spent before the request leaves the host), or DeliveryUnknown (sent, unknown).
          const checkOwn = (token: string, exit: Exit.Exit<{ structuredContent?: unknown }, { _tag: string }>) => {
            if (Exit.isSuccess(exit)) return assert.strictEqual(structured(exit.value).token, token)
            if (Exit.isInterrupted(exit)) return
            const error = (exit.cause as { error?: { _tag: string } }).error
            assert.include(
              ["WorkerBusy", "DeadlineExceeded", "DeliveryUnknown"],
              error?._tag,
              `unexpected outcome for ${token}`
            )
          }
          await fc.assert(
            fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 4 }), async (ops) => {
              for (const o of ops) {
                const token = `t${counter++}`
                switch (o.kind) {
                  case "call": {
                    checkOwn(token, await runtime.runPromiseExit(call(token, o.ms, o.timeout)))
                    break
                  }
                  case "interrupt": {
                    const fiber = runtime.runFork(call(token, o.ms))
                    await new Promise((resolve) => setTimeout(resolve, o.after))
                    checkOwn(token, await runtime.runPromise(Fiber.interrupt(fiber)))
                    break
                  }
                  case "cancel": {
                    const fiber = runtime.runFork(call(token, o.ms))
                    const status = await runtime.runPromise(workers.status(id))
                    if (status.requestId !== null) {
                      await runtime.runPromiseExit(workers.cancel(id, status.requestId))
                    }
                    checkOwn(token, await runtime.runPromise(Fiber.await(fiber)))
                    break
                  }
                  case "race": {
                    const other = `${token}b`
                    const [x, y] = await Promise.all([
                      runtime.runPromiseExit(call(token, o.ms)),
                      runtime.runPromiseExit(call(other, o.ms))
                    ])
                    checkOwn(token, x)
                    checkOwn(other, y)
                    const busy = [x, y].filter(
                      (exit) => Exit.isFailure(exit) && (exit.cause as any).error?._tag === "WorkerBusy"
                    )
                    assert.strictEqual(busy.length, 1, "exactly one of two racing calls is refused")
                    break
                  }
                }
              }
              const status = await runtime.runPromise(workers.status(id))
              assert.strictEqual(status.state, "ready")
              assert.isFalse(status.busy)
            }),
            { numRuns: 200, interruptAfterTimeLimit: 60_000 }
          )
          // The connection is still exact after all of it.
          const last = await runtime.runPromise(workers.callTool(id, "echo", { token: "final" }))
          assert.strictEqual(structured(last).token, "final")
        } finally {
          await runtime.dispose()
        }
      }),
    { timeout: 90_000 }
  )
})
