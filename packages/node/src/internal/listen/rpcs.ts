// docs/wire.md: each request plain and as `<name>Streamed`.
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"

const deadline = Schema.optional(Schema.Number)

/** Only `spill: false` crosses. @internal */
export const RequestPayload = Schema.Struct({
  id: Schema.String,
  ...Struct.omit(OwnerProtocol.Envelope.fields, "method", "progress", "deadline", "spill"),
  deadline,
  spill: Schema.optional(Schema.Literal(false))
})

/** @internal */
export const StreamItem = Schema.Union(
  Schema.TaggedStruct("Progress", {
    progress: Schema.Number,
    total: Schema.optional(Schema.Number),
    message: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Result", { value: Schema.Unknown })
)

/** @internal */
export type RequestName = keyof Operations.Requests

/** @internal */
export const streamedTag = (name: string): string => `${name}Streamed`

const requestRpcs = Object.keys(Operations.requests).flatMap((name) => [
  Rpc.make(name, { payload: RequestPayload, success: Schema.Unknown, error: McpWorkerError }),
  Rpc.make(streamedTag(name), { payload: RequestPayload, success: StreamItem, error: McpWorkerError, stream: true })
])

/** C18 @internal */
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

/** Pulled only when the reader asks: neither side holds past `capacity`. @internal */
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

/** @internal */
export const ListenRpcs = RpcGroup.make(Open, Status, Cancel, Close, Events, ...requestRpcs)
