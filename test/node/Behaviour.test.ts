// The rules every request follows (busy, budget, cancel, a caller who stops waiting), one suite run against every
// surface: the host service, the Promise client in the host's thread, and a remote thread's layerRemote and Promise
// client; and against both places an owner runs, a thread of the host and a process of its own (C35). McpClient,
// which has no owner, runs it in McpClient.test.ts. And against both protocol eras (C51): the 1.x stateful fixture
// (2025-11-25, initialize) and the v2 modern fixture (2026-07-28, server/discover, nothing but the _meta envelope).
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import { modernConfig, statefulConfig } from "../fixtures/servers.js"
import {
  abortedByInterruption,
  abortedByPromise,
  effectSurface,
  exerciseBehaviour,
  expectedBehaviour
} from "./behaviourSuite.js"
import { withHost, withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const eras = { legacy: statefulConfig, modern: modernConfig } as const

describe.each([
  ["thread", "legacy"],
  ["process", "legacy"],
  ["thread", "modern"],
  ["process", "modern"]
] as const)("C8–C12, C35, C51: every surface follows the same request rules (%s, %s era)", (isolation, era) => {
  const stateful = () => eras[era]("--exit-on-stdin-eof")
  it.live("the host service", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful(), { isolation })
        assert.strictEqual((yield* workers.status(id)).era, era)
        const seen = yield* Effect.promise(() => exerciseBehaviour(effectSurface(workers), id))
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByInterruption))
      })
    )
  )

  it.live("the Promise client in the host's thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful(), { isolation })
        const seen = yield* withPromiseClient((mcp) => exerciseBehaviour(mcp, id))
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByPromise))
      })
    )
  )

  it.live("a remote thread: layerRemote and the Promise client", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const effect = yield* workers.open(stateful(), { isolation })
        const promise = yield* workers.open(stateful(), { isolation })
        const effectRelayed = yield* workers.open(stateful(), { isolation })
        const promiseRelayed = yield* workers.open(stateful(), { isolation })
        const outcome = yield* runInThread(entry(), {
          scenario: "behaviour",
          data: { effect, promise, effectRelayed, promiseRelayed }
        })
        assert.isTrue(outcome.ok, outcome.ok ? "" : String(outcome.error))
        // Straight to the owner thread (an owner process relays), and relayed by the host.
        assert.deepStrictEqual(outcome.ok ? outcome.value : null, {
          effect: expectedBehaviour(abortedByInterruption),
          promise: expectedBehaviour(abortedByPromise),
          effectRelayed: expectedBehaviour(abortedByInterruption),
          promiseRelayed: expectedBehaviour(abortedByPromise)
        })
      })
    )
  )
})
