// C11, C46: a caller whose call has answered (here: aborted) finds the worker free on its next call, on every surface:
// 1,000 rounds each over the socket and from a remote thread, none of them `WorkerBusy`.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { statefulConfig } from "../fixtures/servers.js"
import { abortThenCall, type AbortRounds, expectedRounds } from "./abortSuite.js"
import { effectSurface } from "./behaviourSuite.js"
import { withHost } from "./helpers.js"
import { listening } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const rounds = 1_000
const abortedUnknown = "DeliveryUnknown:unknown"

describe("C11, C46: after an answered abort the worker is free", () => {
  it.scopedLive(
    "over the socket: 1,000 aborts each from the Promise client and layerConnect, each followed by an answered call",
    () =>
      Effect.gen(function* () {
        const { grants, path: socketFile, workers } = yield* listening()
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const grant = yield* grants.grant(id)
        const mcp = yield* Effect.acquireRelease(
          Effect.sync(() => makePromiseClient({ connect: socketFile })),
          (client) => Effect.promise(() => client.dispose())
        )
        const seen = yield* Effect.promise(() => abortThenCall(mcp, grant, rounds))
        assert.deepStrictEqual(seen, expectedRounds(rounds, abortedUnknown))
        // layerConnect: the caller's fiber is interrupted, and the listener hears the rpc client's `Interrupt` frame.
        const connected = yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socketFile }))
        const remote = connected.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
        const interrupted = yield* Effect.promise(() => abortThenCall(effectSurface(remote), grant, rounds))
        assert.deepStrictEqual(interrupted, expectedRounds(rounds, "Interrupted:undefined"))
      }),
    120_000
  )

  it.live(
    "from a remote thread: 1,000 aborts on each path (relayed, direct, layerRemote), each followed by an answered call",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
          const outcome = yield* runInThread(entry(), { scenario: "abortThenCall", data: { id, rounds } })
          assert.isTrue(outcome.ok, JSON.stringify(outcome))
          const { direct, effect, relayed } = (outcome as { value: Record<string, AbortRounds> }).value
          assert.deepStrictEqual(relayed, expectedRounds(rounds, abortedUnknown))
          // Aborted 0 to 7 ms in, a call may end before it was sent: then it says so, and it is never busy.
          assert.deepStrictEqual(direct!.next, { result: rounds })
          assert.deepStrictEqual(effect!.next, { result: rounds })
          assert.deepStrictEqual(Object.keys(effect!.aborted), ["Interrupted:undefined"])
          assert.includeMembers(["DeliveryUnknown:unknown", "DeadlineExceeded:not_sent"], Object.keys(direct!.aborted))
        })
      ),
    180_000
  )
})
