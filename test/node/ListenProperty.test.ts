// The randomized interleaving property of the suite, across processes: two sandbox processes share one worker through
// one listener, with calls, timeouts, aborted signals and races. Every outcome agrees with what the server executed,
// and nothing runs twice (C43, C46).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { statefulConfig } from "../fixtures/servers.js"
import { structured } from "./helpers.js"
import { listening, sandboxEntry, startSandbox, type Outcome } from "./listenSandbox.js"

const entry = sandboxEntry()

const step = fc.record({
  box: fc.integer({ min: 0, max: 1 }),
  ms: fc.integer({ min: 0, max: 80 }),
  timeout: fc.option(fc.integer({ min: 10, max: 120 }), { nil: undefined }),
  abortAfterMs: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  gapMs: fc.integer({ min: 0, max: 30 })
})

describe("listener property", () => {
  it.scopedLive(
    "property: two sandbox processes, random calls, timeouts, aborts and races: every outcome is what the server did, once",
    () =>
      Effect.gen(function* () {
        const { grants, path: socketFile, workers } = yield* listening()
        const boxes = yield* Effect.promise(() =>
          Promise.all([startSandbox(entry(), socketFile), startSandbox(entry(), socketFile)])
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => boxes.forEach((box) => box.child.kill("SIGKILL"))))
        let run = 0
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 14 }), async (steps) => {
              run++
              const id = await Effect.runPromise(workers.open(statefulConfig()))
              const grant = await Effect.runPromise(grants.grant(id))
              const pending: Array<Promise<{ token: string; outcome: Outcome }>> = []
              for (const [i, s] of steps.entries()) {
                const token = `r${run}s${i}`
                pending.push(
                  boxes[s.box]!.post("callTool", [grant, "sleep", { ms: s.ms, token }], {
                    ...(s.timeout === undefined ? {} : { timeout: s.timeout }),
                    ...(s.abortAfterMs === undefined ? {} : { abortAfterMs: s.abortAfterMs })
                  }).then((outcome) => ({ token, outcome }))
                )
                await new Promise((resolve) => setTimeout(resolve, s.gapMs))
              }
              const outcomes = await Promise.all(pending)
              // Let cancelled requests settle at the server before reading what it saw.
              await new Promise((resolve) => setTimeout(resolve, 200))
              const calls = structured(await Effect.runPromise(workers.callTool(id, "calls"))).calls as Array<{
                token?: string
              }>
              const seen = new Map<string, number>()
              for (const call of calls) if (call.token) seen.set(call.token, (seen.get(call.token) ?? 0) + 1)
              for (const { token, outcome } of outcomes) {
                const times = seen.get(token) ?? 0
                assert.isAtMost(times, 1, `${token} ran twice`)
                if (outcome.ok) assert.strictEqual(times, 1, `${token} succeeded but the server never ran it`)
                // C66: a rejection with the call's own signal's reason says its request never left the caller.
                else if (outcome.error?.delivery === "not_sent" || outcome.error?.name === "AbortError") {
                  assert.strictEqual(times, 0, `${token}: ${outcome.error._tag} said not sent, but the server ran it`)
                } else {
                  assert.include(["DeliveryUnknown", "ResultTooLarge"], outcome.error?._tag, JSON.stringify(outcome))
                }
              }
              await Effect.runPromise(workers.close(id))
            }),
            { numRuns: 4 }
          )
        )
      }),
    120_000
  )
})
