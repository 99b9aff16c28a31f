/**
 * The operations a listener serves, as one `RpcGroup`: every request of the operation table (`Operations.requests`)
 * twice — plain, and `<name>Streamed` for a caller with `onProgress`, whose progress streams back ahead of the result —
 * and the life cycle (`open`, `status`, `cancel`, `close`, `events`). Payloads carry the worker id (or a grant) and the
 * params as JSON text, checked as plain data in the calling process; results are the server's raw JSON.
 *
 * @internal
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Schema from "effect/Schema"

/** The caller's deadline, `Date.now()` epoch ms: one clock for every process of the machine (C9). */
const deadline = Schema.optional(Schema.Number)

/** What every request of the table sends. @internal */
export const RequestPayload = Schema.Struct({
  /** A grant, or (where the listener accepts them) a worker id. */
  id: Schema.String,
  params: Schema.String,
  deadline,
  /** The caller's idle budget in ms (C121), which the owner runs. */
  idleMs: Schema.optional(Schema.Number),
  saveTo: Schema.optional(Schema.String),
  /** The call's `onTooLarge: "fail"`: the worker's own spill does not apply to it (a spill of the caller's is refused). */
  spill: Schema.optional(Schema.Literal(false)),
  /** The caller's trace context when its trace carries a `tracestate` or `baggage` (C84); the envelope has the ids. */
  trace: Schema.optional(OwnerProtocol.TraceContext)
})

/** One element of a streamed request: a progress notification, then the result. @internal */
export const StreamItem = Schema.Union(
  Schema.TaggedStruct("Progress", {
    progress: Schema.Number,
    total: Schema.optional(Schema.Number),
    message: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Result", { value: Schema.Unknown })
)

/** A request of the table by its name on `McpWorkers`. @internal */
export type RequestName = keyof Operations.Requests

/** The tag of the streamed twin of a request. @internal */
export const streamedTag = (name: string): string => `${name}Streamed`

const requestRpcs = Object.keys(Operations.requests).flatMap((name) => [
  Rpc.make(name, { payload: RequestPayload, success: Schema.Unknown, error: McpWorkerError }),
  Rpc.make(streamedTag(name), { payload: RequestPayload, success: StreamItem, error: McpWorkerError, stream: true })
])

/** `open`: the config normalized in the calling process (its `envFrom` read there, C18), in its wire form. @internal */
export const Open = Rpc.make("open", {
  payload: {
    config: Schema.String,
    deadline,
    isolation: Schema.optional(Schema.Literal("thread", "process")),
    maxOldGenerationSizeMb: Schema.optional(Schema.Number),
    tools: Schema.optional(OwnerProtocol.ToolFilter)
  },
  success: Schema.String,
  error: McpWorkerError
})

/** @internal */
export const Status = Rpc.make("status", {
  payload: { id: Schema.String },
  success: Schema.Unknown,
  error: McpWorkerError
})

/** @internal */
export const Cancel = Rpc.make("cancel", {
  payload: { id: Schema.String, requestId: Schema.String },
  error: McpWorkerError
})

/** @internal */
export const Close = Rpc.make("close", {
  payload: { id: Schema.String, deadline },
  success: Schema.Unknown,
  error: McpWorkerError
})

/**
 * One pull of an `events` subscription (`subscription`: the caller's random id for it, within its connection): the
 * first pull subscribes, each is answered with what the host buffered for it once there is at least one, and `end`
 * unsubscribes. The caller pulls again only when its reader asks, so neither side holds more than `capacity` for it.
 *
 * @internal
 */
export const Events = Rpc.make("events", {
  payload: {
    id: Schema.String,
    subscription: Schema.String,
    capacity: Schema.Number,
    end: Schema.optional(Schema.Boolean)
  },
  success: Schema.Struct({ items: Schema.Array(Schema.Unknown), done: Schema.Boolean }),
  error: McpWorkerError
})

/**
 * Every operation of a listener. The requests are derived from the table, so a new entry there is served here with
 * no change.
 *
 * @internal
 */
export const ListenRpcs = RpcGroup.make(Open, Status, Cancel, Close, Events, ...requestRpcs)
