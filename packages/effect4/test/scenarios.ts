// What an Effect 4 program does with a worker, the same in the host's thread and in a remote thread: typed errors
// caught by tag, an interruption that cancels exactly its request, and events as a Stream. Returns plain data.
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { McpWorkers } from "../src/McpWorkers.js"

/** A result's `structuredContent`, typed `unknown` as the MCP SDK types it, read as the fixture's record. */
export const structured = (result: { readonly structuredContent?: unknown }) =>
  result.structuredContent as Record<string, any>

/**
 * Polls `status` until a request is in flight; its id. The guard is in time, well inside the test's own timeout: a
 * remote thread's request reaches its owner late on a loaded machine, but it does arrive.
 */
export const inFlight = (id: string) =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const giveUpAt = Date.now() + 20_000
    while (Date.now() < giveUpAt) {
      const status = yield* workers.status(id)
      if (status.busy && status.requestId !== null) return status.requestId
      yield* Effect.sleep(5)
    }
    return yield* Effect.die(new Error("no request went into flight within 20 s"))
  })

/** The scenario on a ready worker of the stateful fixture: busy, a timeout, an interruption, events. */
export const typedScenario = (id: string) =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers

    // WorkerBusy: refused, not sent, caught by its tag. The holder is long (a loaded machine may take a while to
    // refuse), and is cancelled once the refusal is in.
    const sleeping = yield* Effect.forkChild(workers.callTool(id, "sleep", { ms: 10_000, token: "busy-holder" }))
    const holder = yield* inFlight(id)
    const busy = yield* workers.callTool(id, "echo", { token: "refused" }).pipe(
      Effect.as("sent" as const),
      Effect.catchTag("WorkerBusy", (error) =>
        Effect.succeed({ tag: error._tag, delivery: error.delivery, namesHolder: error.requestId === holder })
      )
    )
    yield* workers.cancel(id, holder)
    const held = yield* Fiber.join(sleeping).pipe(
      Effect.as("answered"),
      Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed(error.reason))
    )

    // DeliveryUnknown: the budget ended while the server worked; caught by its tag.
    const unknown = yield* workers.callTool(id, "sleep", { ms: 10_000, token: "timeout" }, { timeout: 200 }).pipe(
      Effect.as("answered" as const),
      Effect.catchTag("DeliveryUnknown", (error) =>
        Effect.succeed({ tag: error._tag, delivery: error.delivery, reason: error.reason })
      )
    )

    // An interruption cancels exactly its request at the server.
    const interrupted = yield* Effect.forkChild(workers.callTool(id, "sleep", { ms: 10_000, token: "interrupt" }))
    yield* inFlight(id)
    yield* Fiber.interrupt(interrupted)
    const afterInterrupt = structured(yield* workers.callTool(id, "echo", { token: "after" })).token

    // Events as a Stream: every notification the server sends from the stream's start, in order.
    const methods = ["notifications/tools/list_changed", "notifications/message"]
    const collecting = yield* Effect.forkChild(Stream.runCollect(Stream.take(workers.events(id), methods.length)))
    yield* Effect.sleep(50)
    yield* workers.callTool(id, "notify", { methods })
    const events = (yield* Fiber.join(collecting)).map((event) => event.method)

    // What the server saw: every sleep once, and a cancellation for each request given up, with its reason.
    let cancelled: Array<unknown> = []
    let calls: Array<any> = []
    for (let i = 0; i < 100 && cancelled.length < 3; i++) {
      if (i > 0) yield* Effect.sleep(20)
      calls = structured(yield* workers.callTool(id, "calls")).calls
      cancelled = structured(yield* workers.callTool(id, "cancelled")).cancelled
    }
    const tokenOf = (requestId: unknown) => calls.find((call) => call.id === requestId)?.token ?? "?"
    return {
      busy,
      held,
      unknown,
      afterInterrupt,
      events,
      sleepsAtServer: calls.filter((call) => call.name === "sleep").map((call) => call.token),
      cancelledAtServer: cancelled.map((c: any) => [tokenOf(c.requestId), c.reason])
    }
  })

/** What `typedScenario` answers wherever it runs. */
export const expectedTyped = {
  busy: { tag: "WorkerBusy", delivery: "not_sent", namesHolder: true },
  held: "cancelled",
  unknown: { tag: "DeliveryUnknown", delivery: "unknown", reason: "timeout" },
  afterInterrupt: "after",
  events: ["notifications/tools/list_changed", "notifications/message"],
  sleepsAtServer: ["busy-holder", "timeout", "interrupt"],
  cancelledAtServer: [
    ["busy-holder", "cancelled"],
    ["timeout", "timeout"],
    ["interrupt", "interrupted"]
  ]
}
