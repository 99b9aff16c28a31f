import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Budget from "../../packages/node/src/internal/shared/budget.js"

describe("Budget", () => {
  it.effect("what is left of a budget follows the Clock service, and a spent one still leaves 1 ms", () =>
    Effect.gen(function* () {
      const budgetMs = yield* Budget.budgetOf("2 seconds")
      assert.strictEqual(budgetMs, 2000)
      const running = yield* Budget.start(budgetMs!)
      assert.strictEqual(yield* Budget.left(running), 2000)
      yield* TestClock.adjust("1500 millis")
      assert.strictEqual(yield* Budget.elapsed(running), 1500)
      assert.strictEqual(yield* Budget.left(running), 500)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Budget.elapsed(running), 2500)
      assert.strictEqual(yield* Budget.left(running), 1)
    })
  )
})
