// The thread plane's message types are the host's Schemas' encoded types: one protocol, proven by the compiler (a
// difference in any field, optionality or literal fails the typecheck). Its channel names and timings are the
// caller's, which the host imports (`ThreadCaller.protocol`). A request's `Envelope` is proven the same way, with the
// socket plane's request payload built from it.
import { assert, describe, it } from "@effect/vitest"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type * as Schema from "effect/Schema"
import * as Caller from "../../packages/caller/src/internal/thread/protocol.js"
import * as Host from "../../packages/node/src/internal/thread/protocol.js"
import type * as CallerSocket from "../../packages/caller/src/internal/socket/connection.js"
import type * as Listen from "../../packages/node/src/internal/listen/rpcs.js"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

const proven = <T extends true>(_: T): T => _

type Encoded<S extends Schema.Schema.Any> = S["Encoded"]
type HostError = Encoded<typeof Host.RemoteFailure>["error"]

export const equalities = {
  Envelope: proven<Equals<Caller.Envelope, Encoded<typeof OwnerProtocol.Envelope>>>(true),
  RequestPayload: proven<Equals<CallerSocket.RequestPayload, Encoded<typeof Listen.RequestPayload>>>(true),
  Method: proven<Equals<Caller.Method, Encoded<typeof OwnerProtocol.Method>>>(true),
  TraceContext: proven<Equals<Caller.TraceContext, Encoded<typeof OwnerProtocol.TraceContext>>>(true),
  Progress: proven<Equals<Caller.Progress, Encoded<typeof OwnerProtocol.Progress>>>(true),
  Spill: proven<Equals<Caller.Spill, Encoded<typeof OwnerProtocol.Spill>>>(true),
  RemoteOpen: proven<Equals<Caller.RemoteOpen, Encoded<typeof Host.RemoteOpen>>>(true),
  RemoteCall: proven<Equals<Caller.RemoteCall, Encoded<typeof Host.RemoteCall>>>(true),
  RemoteStatus: proven<Equals<Caller.RemoteStatus, Encoded<typeof Host.RemoteStatus>>>(true),
  RemoteCancel: proven<Equals<Caller.RemoteCancel, Encoded<typeof Host.RemoteCancel>>>(true),
  RemoteClose: proven<Equals<Caller.RemoteClose, Encoded<typeof Host.RemoteClose>>>(true),
  RemoteEvents: proven<Equals<Caller.RemoteEvents, Encoded<typeof Host.RemoteEvents>>>(true),
  Operation: proven<Equals<Caller.Operation, Encoded<typeof Host.Operation>>>(true),
  RemoteRequest: proven<Equals<Caller.RemoteRequest, Encoded<typeof Host.RemoteRequest>>>(true),
  Interrupt: proven<Equals<Caller.Interrupt, Encoded<typeof Host.Interrupt>>>(true),
  Ping: proven<Equals<Caller.Ping, Encoded<typeof Host.Ping>>>(true),
  RemoteMessage: proven<Equals<Caller.RemoteMessage, Encoded<typeof Host.RemoteMessage>>>(true),
  Direct: proven<Equals<Caller.Direct, Encoded<typeof Host.Direct>>>(true),
  OwnerChannelMessage: proven<Equals<Caller.OwnerChannelMessage, Encoded<typeof Host.OwnerChannelMessage>>>(true),
  Ack: proven<Equals<Caller.Ack, Encoded<typeof Host.Ack>>>(true),
  RemoteSuccess: proven<Equals<Caller.RemoteSuccess, Encoded<typeof Host.RemoteSuccess>>>(true),
  Result: proven<Equals<Caller.Result, Encoded<typeof Host.Result>>>(true),
  RemoteFailure: proven<Equals<Caller.RemoteFailure<HostError>, Encoded<typeof Host.RemoteFailure>>>(true),
  Defect: proven<Equals<Caller.Defect, Encoded<typeof Host.Defect>>>(true),
  RemoteProgress: proven<Equals<Caller.RemoteProgress, Encoded<typeof Host.RemoteProgress>>>(true),
  Route: proven<Equals<Caller.Route, Encoded<typeof Host.Route>>>(true),
  WorkerEnded: proven<Equals<Caller.WorkerEnded<HostError>, Encoded<typeof Host.WorkerEnded>>>(true),
  Unrouted: proven<Equals<Caller.Unrouted, Encoded<typeof Host.Unrouted>>>(true),
  Reply: proven<Equals<Caller.Reply<HostError>, Encoded<typeof Host.Reply>>>(true),
  Up: proven<Equals<Caller.Up, Encoded<typeof Host.Up>>>(true),
  Gone: proven<Equals<Caller.Gone, Encoded<typeof Host.Gone>>>(true),
  Announcement: proven<Equals<Caller.Announcement, Encoded<typeof Host.Announcement>>>(true),
  EventsBatch: proven<Equals<Caller.EventsBatch<unknown>["done"], Host.EventsBatch["done"]>>(true)
}

describe("the thread plane's protocol", () => {
  it("the host's messages are the caller's (the equalities above typecheck)", () => {
    assert.isTrue(Object.values(equalities).every((proof) => proof))
  })

  it("random ids are 96 bits of base64url, distinct", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => Caller.randomId()))
    assert.strictEqual(ids.size, 1000)
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{16}$/)
  })
})
