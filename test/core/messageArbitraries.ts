// Random messages for the property tests that hold a hand-written check of a protocol message against the Schema it
// stands for (test/core/OwnerProtocol.test.ts, test/node/RemoteProtocol.test.ts): mostly wrong ones, and as many
// right ones, so that both sides of each check are reached in every run.
import { assert } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"

/** Any value a field could hold, right or wrong (tags and methods of the protocols among them). */
export const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.string(),
  fc.constantFrom(
    "tools/call",
    "tools/list",
    "ping",
    "tools/cal",
    "Request",
    "Success",
    "Observed",
    "Call",
    "Result",
    "Status"
  ),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })
)

/** An object with some of the message's fields, each of the right type or of any other, and something extra. */
export const messageLike = (tag: string, fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(
    {
      _tag: fc.oneof(fc.constant(tag), anyField),
      ...Object.fromEntries(Object.entries(fields).map(([key, right]) => [key, fc.oneof(right, right, anyField)])),
      extra: anyField
    },
    { requiredKeys: ["_tag"] }
  )

/** An object with every required field of the message right, and some of its optional ones (right too). */
export const validLike = <F extends Record<string, fc.Arbitrary<unknown>>>(
  tag: string,
  fields: F,
  required: ReadonlyArray<keyof F & string>
) => {
  const model: Record<string, fc.Arbitrary<unknown>> = { _tag: fc.constant(tag), ...fields, extra: anyField }
  return fc.record(model, { requiredKeys: ["_tag", ...required] })
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `value` cut down to the fields `decoded` (what the Schema gave for it) has, at every depth: the Schema drops
 * unknown fields, a hand-written check leaves them, and every field the Schema keeps must be there with the same value.
 */
export const asDecoded = (value: unknown, decoded: unknown): unknown =>
  isPlainObject(value) && isPlainObject(decoded)
    ? Object.fromEntries(Object.keys(decoded).map((key) => [key, asDecoded(value[key], decoded[key])]))
    : value

/**
 * Holds a hand-written check (`fast`) against the Schema it stands for (`slow`) on 3000 random values of `arbitrary`
 * and of `anyField`: each accepts exactly what the other accepts, with the same fields; and at least `atLeast` of
 * them are accepted, so that both sides of the check are reached.
 */
export const agreesWithSchema = (
  arbitrary: fc.Arbitrary<unknown>,
  fast: (raw: unknown) => Either.Either<unknown, unknown>,
  slow: (raw: unknown) => Either.Either<unknown, unknown>,
  atLeast: number
): void => {
  let accepted = 0
  fc.assert(
    fc.property(fc.oneof(arbitrary, anyField), (raw) => {
      const quick = fast(raw)
      const checked = slow(raw)
      assert.strictEqual(Either.isRight(quick), Either.isRight(checked))
      if (Either.isRight(quick) && Either.isRight(checked)) {
        accepted++
        assert.deepStrictEqual(asDecoded(quick.right, checked.right), checked.right)
      }
    }),
    { numRuns: 3000 }
  )
  assert.isAbove(accepted, atLeast)
}
