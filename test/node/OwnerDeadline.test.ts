// C175: the owner keeps every request's deadline; the one other timer is the caller's give-up, 250 ms later.
import { assert, describe, it } from "@effect/vitest"
import type { McpWorkersService } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { statefulConfig } from "../fixtures/servers.js"
import { listening, scopedSandbox, stall } from "./listenSandbox.js"
import { structured } from "./helpers.js"

const sandbox = scopedSandbox

const untilBusy = (workers: McpWorkersService, id: string, busy: boolean) =>
  Effect.gen(function* () {
    while ((yield* workers.status(id)).busy !== busy) yield* Effect.sleep(5)
  })

/** When the server's `sleep` carrying `token` stopped for its cancellation, on the machine's clock. */
const abortedAt = (workers: McpWorkersService, id: string, token: string) =>
  Effect.gen(function* () {
    const calls = structured(yield* workers.callTool(id, "calls", {})).calls as Array<{ id: number; token?: string }>
    const jsonRpcId = calls.find((call) => call.token === token)?.id
    const { aborted } = structured(yield* workers.callTool(id, "cancelled", {}))
    return (aborted as Array<{ requestId: number; at: number }>).find((entry) => entry.requestId === jsonRpcId)?.at
  })

const tokensAtServer = (workers: McpWorkersService, id: string) =>
  Effect.map(workers.callTool(id, "calls", {}), (result) =>
    (structured(result).calls as Array<{ token?: string }>).map((call) => call.token)
  )

describe("C175: one timer per party", () => {
  it.scopedLive(
    "the owner ends a request at its deadline while the host's thread cannot: the host's own call and a socket peer's",
    () =>
      Effect.gen(function* () {
        const { path, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const box = yield* sandbox(path)

        const hostCall = yield* Effect.fork(
          Effect.flip(workers.callTool(id, "sleep", { ms: 10_000, token: "host" }, { timeout: 300 }))
        )
        yield* untilBusy(workers, id, true)
        // Past the deadline and the give-up after it: only the owner's own timer can end the call meanwhile.
        const hostFreed = stall(1_500)
        const hostError = yield* Fiber.join(hostCall)
        assert.deepInclude(hostError as object, { _tag: "DeliveryUnknown", reason: "timeout", delivery: "unknown" })
        const hostAborted = yield* abortedAt(workers, id, "host")
        assert.isDefined(hostAborted)
        assert.isBelow(hostAborted!, hostFreed, "the server was told while the host's thread was blocked")

        const peerCall = box.post("callTool", [grant, "sleep", { ms: 10_000, token: "peer" }], { timeout: 300 })
        yield* untilBusy(workers, id, true)
        const peerFreed = stall(1_500)
        const peer = yield* Effect.promise(() => peerCall)
        assert.deepInclude(peer.error, { _tag: "DeliveryUnknown", reason: "timeout", delivery: "unknown" })
        const peerAborted = yield* abortedAt(workers, id, "peer")
        assert.isDefined(peerAborted)
        assert.isBelow(peerAborted!, peerFreed, "the server was told while the host's thread was blocked")
      }),
    30_000
  )

  it.scopedLive(
    "an owner that cannot answer: the caller's give-up ends the wait after the deadline, and the owner, woken, " +
      "sends nothing whose deadline has passed (C22a)",
    () =>
      Effect.gen(function* () {
        const { path, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig(), { isolation: "process" })
        const ownerPid = (yield* workers.status(id)).ownerPid!
        const grant = yield* grants.grant(id)
        const box = yield* sandbox(path)
        const stopped = <A, E>(effect: Effect.Effect<A, E>) =>
          Effect.acquireUseRelease(
            Effect.sync(() => process.kill(ownerPid, "SIGSTOP")),
            () => effect,
            () => Effect.sync(() => process.kill(ownerPid, "SIGCONT"))
          )

        const started = Date.now()
        const hostError = yield* stopped(
          Effect.flip(workers.callTool(id, "sleep", { ms: 10_000, token: "host" }, { timeout: 300 }))
        )
        const waited = Date.now() - started
        assert.deepInclude(hostError as object, { _tag: "DeliveryUnknown", reason: "timeout", delivery: "unknown" })
        // The host's give-up is the deadline plus 250 ms; at the deadline it still waits for the owner.
        assert.isAtLeast(waited, 540)

        const peer = yield* stopped(
          Effect.promise(() => box.run("callTool", [grant, "sleep", { ms: 10_000, token: "peer" }], { timeout: 300 }))
        )
        assert.deepInclude(peer.error, { _tag: "DeliveryUnknown", reason: "timeout", delivery: "unknown" })

        // Woken, the owner reads both requests after their deadlines: neither reaches the server.
        assert.deepStrictEqual((yield* workers.callTool(id, "echo", { token: "after" })).structuredContent, {
          token: "after"
        })
        const tokens = yield* tokensAtServer(workers, id)
        assert.notInclude(tokens, "host")
        assert.notInclude(tokens, "peer")
        assert.include(tokens, "after")
      }),
    30_000
  )
})
