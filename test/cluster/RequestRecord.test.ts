// The runner's record of the messages its entities accepted (C37, C89), on the test clock: a message is admitted
// once, a repeat is refused while recorded and, once forgotten, by its stamp; the record holds only the messages of
// the last budget and margin.
import * as MachineId from "@effect/cluster/MachineId"
import * as Snowflake from "@effect/cluster/Snowflake"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import fc from "fast-check"
import * as RequestRecord from "../../packages/cluster/src/internal/requestRecord.js"

const start = Date.UTC(2026, 0, 1)
const machine = MachineId.make(7)
const idAt = (timestamp: number, sequence: number) => Snowflake.make({ machineId: machine, sequence, timestamp })

describe("RequestRecord", () => {
  it.effect("C89: after 10,000 messages whose budgets passed, the record holds only the one admitted since", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(start)
      const record = yield* RequestRecord.make
      const budgetMs = 30_000
      for (let i = 0; i < 10_000; i++) {
        assert.isUndefined(record.admit(idAt(start + Math.floor(i / 4096), i % 4096), budgetMs))
      }
      assert.strictEqual(record.size(), 10_000)
      yield* TestClock.adjust(budgetMs + RequestRecord.marginMs + 1_000)
      const now = start + budgetMs + RequestRecord.marginMs + 1_000
      assert.isUndefined(record.admit(idAt(now, 0), budgetMs))
      assert.strictEqual(record.size(), 1)
    })
  )

  it.effect("C37: a repeat is refused while recorded, and after the record forgot it, by its stamp", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(start)
      const record = yield* RequestRecord.make
      const id = idAt(start, 1)
      assert.isUndefined(record.admit(id, 5_000))
      assert.strictEqual(record.admit(id, 5_000), "repeat")
      yield* TestClock.adjust(5_000 + RequestRecord.marginMs)
      // the sweep on this admission forgets `id`; its repeat is refused all the same
      assert.isUndefined(record.admit(idAt(start + 5_000 + RequestRecord.marginMs, 0), 5_000))
      assert.strictEqual(record.size(), 1)
      assert.strictEqual(record.admit(id, 5_000), "expired")
      // a budget that says otherwise on the repeat changes nothing that was decided by the first's
      assert.strictEqual(record.admit(id, 1), "expired")
    })
  )

  it.effect("a stamp further ahead than the margin is refused; one within it is kept to its own deadline", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(start)
      const record = yield* RequestRecord.make
      assert.strictEqual(record.admit(idAt(start + RequestRecord.marginMs + 1, 0), 1_000), "ahead")
      const ahead = idAt(start + RequestRecord.marginMs, 0)
      assert.isUndefined(record.admit(ahead, 1_000))
      yield* TestClock.adjust(2 * RequestRecord.marginMs)
      assert.isUndefined(record.admit(idAt(start + 2 * RequestRecord.marginMs, 1), 1_000))
      assert.strictEqual(record.admit(ahead, 1_000), "repeat")
      assert.strictEqual(record.size(), 2)
    })
  )

  it.effect("a budget that is not a number admits nothing", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(start)
      const record = yield* RequestRecord.make
      assert.strictEqual(record.admit(idAt(start, 0), Number.NaN), "expired")
      assert.strictEqual(record.admit(idAt(start, 1), -1 - RequestRecord.marginMs), "expired")
      assert.strictEqual(record.size(), 0)
    })
  )

  // Messages of a few stamps and budgets, each arriving any number of times at any moment over 5 minutes, the clock
  // sometimes set back: none is admitted twice, and the record never holds one past its deadline by a sweep.
  it.effect.prop(
    "property (C37): no message is admitted twice, whenever its repeats arrive",
    [
      fc.array(
        fc.record({
          message: fc.nat({ max: 15 }),
          advanceMs: fc.oneof(fc.nat({ max: 20_000 }), fc.integer({ min: -5_000, max: 0 }))
        }),
        { maxLength: 200 }
      )
    ],
    ([arrivals]) =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const record = yield* RequestRecord.make
        // message i: stamped up to 2 minutes either side of the start, with a budget of 0 to 45 s
        const messages = Array.from({ length: 16 }, (_, i) => ({
          id: idAt(start + ((i * 15_013) % 240_000) - 120_000, i),
          budgetMs: (i * 7_919) % 45_000
        }))
        const admitted = new Set<number>()
        let now = start
        for (const { message, advanceMs } of arrivals) {
          now = Math.max(start, now + advanceMs)
          yield* TestClock.setTime(now)
          const { budgetMs, id } = messages[message]!
          if (record.admit(id, budgetMs) === undefined) {
            assert.isFalse(admitted.has(message), `message ${message} admitted twice`)
            admitted.add(message)
          }
        }
      }),
    { fastCheck: { numRuns: 150 } }
  )
})
