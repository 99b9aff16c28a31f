// C104: the caller's Effect-free checks are the ones every surface runs: its budget parser reads durations as Effect's
// `Duration` does, and its operation table refuses the same input with the same InvalidInput as core's.
import type * as Client from "@mcp-worker/caller/Client"
import type * as JsonValue from "@mcp-worker/caller/JsonValue"
import * as Caller from "@mcp-worker/caller/Operations"
import * as CallerErrors from "@mcp-worker/caller/McpWorkerError"
import * as CoreOperations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as fc from "fast-check"
import { expectTypeOf } from "vitest"

const units = [
  "nano",
  "nanos",
  "micro",
  "micros",
  "milli",
  "millis",
  "second",
  "seconds",
  "minute",
  "minutes",
  "hour",
  "hours",
  "day",
  "days",
  "week",
  "weeks"
]

const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 53 + 1, 1e300, 0.0000001)
)
const decimal = fc
  .tuple(fc.boolean(), fc.nat({ max: 10 ** 12 }), fc.option(fc.nat({ max: 999_999_999 }), { nil: undefined }))
  .map(([negative, whole, fraction]) => `${negative ? "-" : ""}${whole}${fraction === undefined ? "" : `.${fraction}`}`)
const durationString = fc.oneof(
  fc
    .tuple(decimal, fc.constantFrom(" ", "  ", "\t"), fc.constantFrom(...units))
    .map(([n, space, unit]) => `${n}${space}${unit}`),
  fc.tuple(decimal, fc.constantFrom(...units)).map(([n, unit]) => `${n}${unit}`),
  fc.string(),
  fc.constantFrom("5 seconds", "1.5 minutes", " 5 seconds", "5 seconds ", "-5 millis", "Infinity seconds", "1e3 millis")
)
const input = fc.oneof(
  number,
  fc.bigInt({ min: -(10n ** 20n), max: 10n ** 24n }),
  durationString,
  fc.tuple(number, number),
  fc.array(number, { maxLength: 3 }),
  fc
    .oneof(number, fc.bigInt({ min: 0n, max: 10n ** 20n }))
    .map((n) => (typeof n === "bigint" ? Duration.nanos(n) : Duration.millis(n))),
  fc.constantFrom(Duration.infinity, Duration.zero, undefined, null, {}, { value: 5 }, true)
)

// Effect's reading, as core read it before the caller held the parser.
const effectMillis = (u: unknown): number | undefined => {
  const decoded = Duration.decodeUnknown(u)
  return Option.isNone(decoded) ? undefined : Duration.toMillis(decoded.value)
}

describe("caller operations", () => {
  it("read durations as Effect's Duration.decodeUnknown and toMillis do", () => {
    fc.assert(
      fc.property(input, (u) => {
        assert.strictEqual(Caller.durationMillis(u), effectMillis(u))
      }),
      { numRuns: 5000 }
    )
  })

  it("clamp and refuse budgets as core's budgetOf, and at the same bound", () => {
    assert.strictEqual(Caller.maxTimeoutMs, ServerConfig.maxTimeoutMs)
    fc.assert(
      fc.property(input, (u) => {
        const budget = Caller.budgetOf(u)
        const core = Prepare.budgetOf(u)
        assert.deepStrictEqual(
          budget.ok ? Either.right(budget.value) : Either.left(budget.reason),
          core as Either.Either<number | undefined, string>
        )
      }),
      { numRuns: 3000 }
    )
    assert.deepStrictEqual(Caller.budgetOf(Duration.infinity), { ok: true, value: Caller.maxTimeoutMs })
    assert.deepStrictEqual(Caller.budgetOf("5 seconds"), { ok: true, value: 5000 })
  })

  it("hold every request of core's table, with its method and arity", () => {
    assert.sameMembers(Object.keys(Caller.requests), Object.keys(CoreOperations.requests))
    for (const [name, operation] of Object.entries(CoreOperations.requests)) {
      const caller: Caller.Any = Caller.requests[name as keyof Caller.Requests]
      assert.strictEqual(operation.method, caller.method, name)
      assert.strictEqual(operation.arity, caller.arity, name)
      assert.strictEqual(operation.params, caller.params, name)
      assert.strictEqual(operation.span, `McpWorkers.${name}`)
    }
  })

  // Checked when the tests compile (`npm run typecheck`): the faces take each request's arguments from the table.
  it("type each request's arguments once: core's operations and the Promise client read them from the table", () => {
    type ArgsOfCore<O> = O extends CoreOperations.Operation<infer Args, any, any> ? Args : never
    expectTypeOf<{ [K in keyof Caller.Requests]: ArgsOfCore<CoreOperations.Requests[K]> }>().toEqualTypeOf<{
      [K in keyof Caller.Requests]: Caller.ArgsOf<K>
    }>()
    expectTypeOf<Caller.ArgsOf<"ping">>().toEqualTypeOf<[]>()
    expectTypeOf<Caller.ArgsOf<"callTool">>().toEqualTypeOf<[name: string, args?: JsonValue.JsonObject]>()
    // @ts-expect-error `ping` takes the worker id and its options only
    expectTypeOf<Client.Requests["ping"]>().toBeCallableWith("worker", "extra", {})
    assert.deepStrictEqual(
      Object.keys(CoreOperations.requests).sort(),
      Object.keys(Caller.requests).sort(),
      "the same requests"
    )
  })

  it("refuse bad input as core's Prepare does: the same where, path and message", () => {
    const context: Caller.ParamsContext = { checkSavePath: (path) => (path.startsWith("/") ? undefined : "relative") }
    const junk = fc.oneof(
      fc.constantFrom(undefined, null, "", "x", 3, [], {}, { a: 1 }, { a: undefined }, { a: () => 1 }, new Date(0)),
      fc.jsonValue(),
      fc.anything()
    )
    const options = fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          timeout: fc.oneof(number, durationString, fc.constant(undefined)),
          cursor: junk,
          saveTo: fc.oneof(fc.constantFrom("/tmp/x.json", "rel.json"), junk),
          onTooLarge: fc.oneof(fc.constantFrom("fail", { spill: "/tmp" }, { spill: 1 }, { other: 1 }), junk),
          ttl: fc.oneof(number, durationString, fc.constant(Duration.infinity))
        },
        { requiredKeys: [] }
      )
    )
    const names = Object.keys(CoreOperations.requests) as Array<keyof Caller.Requests>
    fc.assert(
      fc.property(fc.constantFrom(...names), junk, junk, junk, options, (name, id, a, b, opts) => {
        const core = Prepare.prepareFor(CoreOperations.requests[name], id, [a, b], opts as never, context)
        const caller = Caller.prepareFor(Caller.requests[name], id, [a, b], opts, context)
        if (Either.isRight(core)) {
          assert.isTrue(caller.ok)
          assert.deepStrictEqual(caller.ok && caller.value, core.right)
        } else {
          assert.isFalse(caller.ok)
          const error = !caller.ok && caller.error
          assert.instanceOf(error, CallerErrors.InvalidInput)
          assert.deepStrictEqual({ ...error }, { ...core.left }, name)
          assert.strictEqual(error && error.message, core.left.message)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("answer the id check of C94 as core does", () => {
    for (const id of [undefined, null, 1, [], {}, "w"]) {
      const caller = Caller.checkId(id, "workerId")
      const core = Prepare.checkId(id, "workerId")
      assert.deepStrictEqual(
        caller.ok ? caller.value : { ...caller.error },
        Either.isRight(core) ? core.right : { ...core.left }
      )
    }
  })
})
