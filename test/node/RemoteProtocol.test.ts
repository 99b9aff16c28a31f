// The remote protocol's hand-written checks of its hot messages (a remote's request of the operation table to the
// host, and straight to an owner thread; an owner thread's `Result`) against the Schemas they stand for: any value is
// accepted by one exactly when the other accepts it, with the same fields.
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import { agreesWithSchema, anyField, messageLike, validLike } from "../core/messageArbitraries.js"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"

const callFields = {
  workerId: fc.string(),
  method: fc.constantFrom(...OwnerProtocol.Method.literals),
  params: fc.string(),
  deadline: fc.double(),
  progress: fc.boolean(),
  saveTo: fc.string(),
  spill: fc.oneof(fc.string(), fc.boolean()),
  direct: fc.boolean()
}
const callRequired = ["workerId", "method", "params"] as const

// Mostly wrong operations (and other operations' tags), and as many right ones.
const operation = fc.oneof(
  messageLike("RemoteCall", callFields),
  validLike("RemoteCall", callFields, callRequired),
  validLike("RemoteCall", callFields, callRequired),
  fc.constantFrom(
    { _tag: "RemoteStatus", workerId: "mcpw_x" },
    { _tag: "RemoteCancel", workerId: "mcpw_x", requestId: "r" }
  ),
  anyField
)

// A span's context, and now and then an array that is almost one.
const trace = fc.oneof(
  { arbitrary: fc.tuple(fc.string(), fc.string(), fc.boolean()), weight: 8 },
  { arbitrary: fc.array(fc.oneof(fc.string(), fc.boolean()), { maxLength: 4 }), weight: 1 }
)

const requestFields = { from: fc.string(), callId: fc.double(), ackBy: fc.double(), operation, trace }

const request = fc.oneof(
  messageLike("RemoteRequest", requestFields),
  validLike("RemoteRequest", requestFields, ["from", "callId", "operation"])
)

const resultFields = { callId: fc.double(), result: fc.string(), envelope: fc.boolean() }

const result = fc.oneof(
  messageLike("Result", resultFields),
  validLike("Result", resultFields, ["callId", "result", "envelope"])
)

const directFields = {
  from: fc.string(),
  callId: fc.double(),
  method: fc.constantFrom(...OwnerProtocol.Method.literals),
  params: fc.string(),
  deadline: fc.double(),
  saveTo: fc.string(),
  spill: fc.oneof(fc.string(), fc.boolean()),
  trace
}

const ownerChannelMessage = fc.oneof(
  messageLike("Direct", directFields),
  validLike("Direct", directFields, ["from", "callId", "method", "params", "deadline"]),
  validLike("Direct", directFields, ["from", "callId", "method", "params", "deadline"]),
  validLike("Interrupt", { from: fc.string(), callId: fc.double(), reply: fc.boolean() }, ["from", "callId", "reply"])
)

describe("remote protocol: the fast checks agree with the Schemas", () => {
  it(
    "decodeOwnerChannelMessage: a request straight to an owner thread passes exactly when the Schema decodes it",
    () =>
      agreesWithSchema(
        ownerChannelMessage,
        Protocol.decodeOwnerChannelMessage,
        OwnerProtocol.safeDecoder(Protocol.OwnerChannelMessage),
        300
      ),
    60_000
  )

  it(
    "decodeRemoteMessage: a request passes exactly when RemoteMessage decodes it",
    () =>
      agreesWithSchema(request, Protocol.decodeRemoteMessage, OwnerProtocol.safeDecoder(Protocol.RemoteMessage), 300),
    60_000
  )

  it(
    "decodeReply: a result passes exactly when Reply decodes it",
    () => agreesWithSchema(result, Protocol.decodeReply, OwnerProtocol.safeDecoder(Protocol.Reply), 300),
    60_000
  )

  it("other messages still go through the Schema", () => {
    const status = {
      _tag: "RemoteRequest",
      from: "r",
      callId: 1,
      operation: { _tag: "RemoteStatus", workerId: "mcpw_x" }
    } as const
    assert.deepStrictEqual(Protocol.decodeRemoteMessage(status), Either.right(status))
    const ping = { _tag: "Ping", from: "r" } as const
    assert.deepStrictEqual(Protocol.decodeRemoteMessage(ping), Either.right(ping))
    const ack = { _tag: "Ack", hostId: "h", callId: 3 } as const
    assert.deepStrictEqual(Protocol.decodeReply(ack), Either.right(ack))
    assert.isTrue(Either.isLeft(Protocol.decodeReply({ _tag: "Ack", hostId: 3 })))
  })
})
