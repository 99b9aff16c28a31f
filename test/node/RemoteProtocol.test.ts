// The remote protocol's hand-written checks of its two hot messages (a remote's request of the operation table, an
// owner thread's `Result`) against the Schemas they stand for: any value is accepted by one exactly when the other
// accepts it, with the same fields.
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as Protocol from "../../packages/node/src/internal/remoteProtocol.js"

/** Any value a field could hold, right or wrong. */
const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.string(),
  fc.constantFrom("tools/call", "tools/cal", "Request", "Call", "Result", "Status"),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })
)

/** An object with some of the fields, each of the right type or of any other, and something extra. */
const someRight = (tag: string, fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(
    {
      _tag: fc.oneof(fc.constant(tag), anyField),
      ...Object.fromEntries(Object.entries(fields).map(([key, right]) => [key, fc.oneof(right, right, anyField)])),
      extra: anyField
    },
    { requiredKeys: ["_tag"] }
  )

/** An object with every required field right, and some of the optional ones (right too). */
const allRight = <F extends Record<string, fc.Arbitrary<unknown>>>(
  tag: string,
  fields: F,
  required: ReadonlyArray<keyof F & string>
) =>
  fc.record({ _tag: fc.constant(tag), ...fields, extra: anyField } as Record<string, fc.Arbitrary<unknown>>, {
    requiredKeys: ["_tag", ...required]
  })

const callFields = {
  workerId: fc.string(),
  method: fc.constantFrom(...OwnerProtocol.Method.literals),
  params: fc.string(),
  deadline: fc.double(),
  progress: fc.boolean(),
  saveTo: fc.string(),
  direct: fc.boolean()
}
const callRequired = ["workerId", "method", "params"] as const

// Mostly wrong operations (and other operations' tags), and as many right ones.
const operation = fc.oneof(
  someRight("Call", callFields),
  allRight("Call", callFields, callRequired),
  allRight("Call", callFields, callRequired),
  fc.constantFrom({ _tag: "Status", workerId: "mcpw_x" }, { _tag: "Cancel", workerId: "mcpw_x", requestId: "r" }),
  anyField
)

const requestFields = { from: fc.string(), callId: fc.double(), ackBy: fc.double(), operation }

const request = fc.oneof(
  someRight("Request", requestFields),
  allRight("Request", requestFields, ["from", "callId", "operation"])
)

const resultFields = { callId: fc.double(), result: fc.string(), envelope: fc.boolean() }

const result = fc.oneof(
  someRight("Result", resultFields),
  allRight("Result", resultFields, ["callId", "result", "envelope"])
)

/** The fields both results carry: the Schema drops unknown ones, the hand-written check leaves them. */
const known = (value: unknown, keys: ReadonlyArray<string>): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.fromEntries(
        keys.filter((key) => key in value).map((key) => [key, (value as Record<string, unknown>)[key]])
      )
    : value

const requestKeys = ["_tag", "from", "callId", "ackBy"]
const operationKeys = ["_tag", "workerId", "method", "params", "deadline", "progress", "saveTo", "direct"]

describe("remote protocol: the hand-written checks agree with the Schemas", () => {
  type Decode = (raw: unknown) => Either.Either<unknown, unknown>
  const cases: ReadonlyArray<{
    readonly name: string
    readonly arbitrary: fc.Arbitrary<unknown>
    readonly fast: Decode
    readonly slow: Decode
    readonly fields: (value: unknown) => unknown
  }> = [
    {
      name: "decodeRemoteMessage: a request passes exactly when RemoteMessage decodes it",
      arbitrary: request,
      fast: Protocol.decodeRemoteMessage,
      slow: OwnerProtocol.safeDecoder(Protocol.RemoteMessage),
      fields: (value) => ({
        ...(known(value, requestKeys) as object),
        operation: known((value as { operation: unknown }).operation, operationKeys)
      })
    },
    {
      name: "decodeReply: a result passes exactly when Reply decodes it",
      arbitrary: result,
      fast: Protocol.decodeReply,
      slow: OwnerProtocol.safeDecoder(Protocol.Reply),
      fields: (value) => known(value, ["_tag", "callId", "result", "envelope"])
    }
  ]

  for (const { arbitrary, fast, fields, name, slow } of cases) {
    it(
      name,
      () => {
        let accepted = 0
        fc.assert(
          fc.property(fc.oneof(arbitrary, anyField), (raw) => {
            const quick = fast(raw)
            const checked = slow(raw)
            assert.strictEqual(Either.isRight(quick), Either.isRight(checked))
            if (Either.isRight(quick) && Either.isRight(checked)) {
              accepted++
              assert.deepStrictEqual(fields(quick.right), fields(checked.right))
            }
          }),
          { numRuns: 3000 }
        )
        // The generator reaches both sides of the check.
        assert.isAbove(accepted, 300)
      },
      60_000
    )
  }

  it("other messages still go through the Schema", () => {
    const status = {
      _tag: "Request",
      from: "r",
      callId: 1,
      operation: { _tag: "Status", workerId: "mcpw_x" }
    } as const
    assert.deepStrictEqual(Protocol.decodeRemoteMessage(status), Either.right(status))
    const ping = { _tag: "Ping", from: "r" } as const
    assert.deepStrictEqual(Protocol.decodeRemoteMessage(ping), Either.right(ping))
    const ack = { _tag: "Ack", hostId: "h", callId: 3 } as const
    assert.deepStrictEqual(Protocol.decodeReply(ack), Either.right(ack))
    assert.isTrue(Either.isLeft(Protocol.decodeReply({ _tag: "Ack", hostId: 3 })))
  })
})
