// The data plane's hand-written checks of its hot messages (a request, a success, a delivery) against the Schemas they
// stand for: any value is accepted by one exactly when the other accepts it, with the same fields.
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"

/** Any value a field could hold, right or wrong. */
const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.string(),
  fc.constantFrom("tools/call", "tools/list", "ping", "tools/cal", "Request", "Success"),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })
)

/** An object with some of the message's fields, each of the right type or of any other. */
const messageLike = (tag: string, fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(
    {
      _tag: fc.oneof(fc.constant(tag), anyField),
      ...Object.fromEntries(Object.entries(fields).map(([key, right]) => [key, fc.oneof(right, right, anyField)])),
      extra: anyField
    },
    { requiredKeys: ["_tag"] }
  )

/** An object with every required field of the message right, and some of its optional ones (right too). */
const validLike = <F extends Record<string, fc.Arbitrary<unknown>>>(
  tag: string,
  fields: F,
  required: ReadonlyArray<keyof F & string>
) => {
  const model: Record<string, fc.Arbitrary<unknown>> = { _tag: fc.constant(tag), ...fields, extra: anyField }
  return fc.record(model, { requiredKeys: ["_tag", ...required] })
}

const requestFields = {
  requestId: fc.string(),
  method: fc.constantFrom(...OwnerProtocol.Method.literals),
  params: fc.string(),
  timeoutMs: fc.double(),
  progress: fc.boolean(),
  saveTo: fc.string(),
  replyTo: fc.record({ channel: fc.string(), callId: fc.double() })
}

// Mostly wrong messages, and as many right ones, so that both sides of the check are reached in every run.
const request = fc.oneof(
  messageLike("Request", requestFields),
  validLike("Request", requestFields, ["requestId", "method", "params", "timeoutMs"])
)

const successFields = { requestId: fc.string(), result: fc.string(), envelope: fc.boolean() }

const success = fc.oneof(
  messageLike("Success", successFields),
  validLike("Success", successFields, ["requestId", "result", "envelope"])
)

const deliveredFields = { requestId: fc.string() }

const delivered = fc.oneof(
  messageLike("Delivered", deliveredFields),
  validLike("Delivered", deliveredFields, ["requestId"])
)

// A value the Schema throws on while inspecting it counts as refused (see the last test).
const bySchema = {
  host: OwnerProtocol.safeDecoder(OwnerProtocol.HostMessage),
  owner: OwnerProtocol.safeDecoder(OwnerProtocol.OwnerMessage)
}

/** The fields both results carry: the Schema drops unknown ones, the fast path leaves them. */
const known = (message: object, keys: ReadonlyArray<string>) =>
  Object.fromEntries(
    keys.filter((key) => key in message).map((key) => [key, (message as Record<string, unknown>)[key]])
  )

describe("OwnerProtocol: the fast checks agree with the Schemas", () => {
  /** A decoder that gives an object or refuses. */
  type Decode = (raw: unknown) => Either.Either<object, unknown>
  const cases: ReadonlyArray<{
    readonly name: string
    readonly arbitrary: fc.Arbitrary<unknown>
    readonly fast: Decode
    readonly slow: Decode
    readonly keys: ReadonlyArray<string>
  }> = [
    {
      name: "decodeHostMessage: a request passes exactly when RequestMessage decodes it",
      arbitrary: request,
      fast: (raw: unknown) => OwnerProtocol.decodeHostMessage(raw),
      slow: bySchema.host,
      keys: ["_tag", "requestId", "method", "params", "timeoutMs", "progress", "saveTo", "replyTo"]
    },
    {
      name: "decodeOwnerMessage: a success passes exactly when SuccessMessage decodes it",
      arbitrary: success,
      fast: (raw: unknown) => OwnerProtocol.decodeOwnerMessage(raw),
      slow: bySchema.owner,
      keys: ["_tag", "requestId", "result", "envelope"]
    },
    {
      name: "decodeOwnerMessage: a delivery passes exactly when DeliveredMessage decodes it",
      arbitrary: delivered,
      fast: (raw: unknown) => OwnerProtocol.decodeOwnerMessage(raw),
      slow: bySchema.owner,
      keys: ["_tag", "requestId"]
    }
  ]

  for (const { arbitrary, fast, keys, name, slow } of cases) {
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
              assert.deepStrictEqual(known(quick.right, keys), known(checked.right, keys))
            }
          }),
          { numRuns: 3000 }
        )
        // The generator reaches both sides of the check.
        assert.isAbove(accepted, 50)
      },
      60_000
    )
  }

  it("other messages still go through the Schema", () => {
    const cancel = { _tag: "Cancel", requestId: "req_x", reason: "timeout" } as const
    assert.deepStrictEqual(OwnerProtocol.decodeHostMessage(cancel), Either.right(cancel))
    assert.isTrue(Either.isLeft(OwnerProtocol.decodeHostMessage({ _tag: "Cancel", requestId: "req_x", reason: "x" })))
    const spawned = { _tag: "Spawned", pid: 12 } as const
    assert.deepStrictEqual(OwnerProtocol.decodeOwnerMessage(spawned), Either.right(spawned))
  })

  // Effect's Schema formats a mismatched tag with `String(...)`, which throws for an object whose `toString` is not a
  // function: a message like that must be refused, not thrown into the port's message handler. (What arrives from
  // another thread is a structured clone: plain data, never a getter.)
  it("a message whose inspection throws is refused, not thrown", () => {
    const hostile = [{ _tag: { toString: "" } }, { _tag: "Request", requestId: { toString: "" } }]
    for (const raw of hostile) {
      assert.isTrue(Either.isLeft(OwnerProtocol.decodeHostMessage(raw)))
      assert.isTrue(Either.isLeft(OwnerProtocol.decodeOwnerMessage(raw)))
    }
    assert.throws(() => Schema.decodeUnknownEither(OwnerProtocol.OwnerMessage)(hostile[0]))
  })
})
