// The data plane's hand-written checks of its hot messages (a request, a success) against the Schemas they
// stand for: any value is accepted by one exactly when the other accepts it, with the same fields.
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { agreesWithSchema, messageLike, validLike } from "./messageArbitraries.js"

// A span's context, and now and then an array that is almost one.
const traceContext = fc.oneof(
  { arbitrary: fc.tuple(fc.string(), fc.string(), fc.boolean()), weight: 4 },
  { arbitrary: fc.tuple(fc.string(), fc.string(), fc.boolean(), fc.string()), weight: 2 },
  { arbitrary: fc.tuple(fc.string(), fc.string(), fc.boolean(), fc.string(), fc.string()), weight: 2 },
  { arbitrary: fc.array(fc.oneof(fc.string(), fc.boolean()), { maxLength: 6 }), weight: 1 }
)

const requestFields = {
  requestId: fc.string(),
  method: fc.constantFrom(...OwnerProtocol.Method.literals),
  params: fc.string(),
  deadline: fc.double(),
  progress: fc.boolean(),
  saveTo: fc.string(),
  spill: fc.oneof(fc.string(), fc.boolean()),
  trace: traceContext
}

// Mostly wrong messages, and as many right ones, so that both sides of the check are reached in every run.
const request = fc.oneof(
  messageLike("Request", requestFields),
  validLike("Request", requestFields, ["requestId", "method", "params", "deadline"])
)

const successFields = { requestId: fc.string(), result: fc.string(), envelope: fc.boolean() }

const success = fc.oneof(
  messageLike("Success", successFields),
  validLike("Success", successFields, ["requestId", "result", "envelope"])
)

// A value the Schema throws on while inspecting it counts as refused (see the last test).
const bySchema = {
  host: OwnerProtocol.safeDecoder(OwnerProtocol.HostMessage),
  owner: OwnerProtocol.safeDecoder(OwnerProtocol.OwnerMessage)
}

describe("OwnerProtocol: the fast checks agree with the Schemas", () => {
  it(
    "decodeHostMessage: a request passes exactly when RequestMessage decodes it",
    () => agreesWithSchema(request, OwnerProtocol.decodeHostMessage, bySchema.host, 300),
    60_000
  )

  it(
    "decodeOwnerMessage: a success passes exactly when SuccessMessage decodes it",
    () => agreesWithSchema(success, OwnerProtocol.decodeOwnerMessage, bySchema.owner, 300),
    60_000
  )

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
