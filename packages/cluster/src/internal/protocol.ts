// One table for the client and the facade. C8: the runner's registry alone decides busy. C37: not `Persisted`.
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import * as McpWorkerError from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as WorkerStatus from "@mcp-worker/core/WorkerStatus"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import * as ClusterWorkerId from "../ClusterWorkerId.js"

export const Request = Rpc.make("Request", {
  payload: {
    workerId: Schema.String,
    operation: Schema.String,
    args: Schema.Array(Schema.Unknown),
    /** C89: a duration, since runners' clocks differ. */
    budgetMs: Schema.Number,
    ...Struct.pick(OwnerProtocol.Envelope.fields, "idleMs", "trace"),
    /** `onTooLarge: "fail"` */
    spill: Schema.optional(Schema.Literal(false)),
    /** Known to the caller alone. */
    call: Schema.String,
    /** It ends before this begins. */
    supersedes: Schema.optional(Schema.String)
  },
  success: Schema.Unknown,
  error: McpWorkerError.RequestError
})

/** C89 */
const budgetMs = Schema.Number

export const Status = Rpc.make("Status", {
  payload: { workerId: Schema.String, budgetMs },
  success: WorkerStatus.WorkerStatus,
  error: Schema.Union(McpWorkerError.UnknownWorker, McpWorkerError.DeliveryUnknown)
})

export const Cancel = Rpc.make("Cancel", {
  payload: { workerId: Schema.String, requestId: Schema.String, budgetMs },
  error: Schema.Union(McpWorkerError.UnknownWorker, McpWorkerError.RequestNotPending, McpWorkerError.DeliveryUnknown)
})

export const Close = Rpc.make("Close", {
  payload: { workerId: Schema.String, timeoutMs: Schema.optional(Schema.Number), budgetMs },
  success: WorkerStatus.WorkerStatus,
  error: Schema.Union(McpWorkerError.UnknownWorker, McpWorkerError.CloseFailed, McpWorkerError.DeliveryUnknown)
})

export const Notification = Schema.Struct({
  method: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const Events = Rpc.make("Events", {
  payload: { workerId: Schema.String, capacity: Schema.optional(Schema.Number) },
  success: Notification,
  error: Schema.Union(McpWorkerError.UnknownWorker, McpWorkerError.InvalidInput),
  stream: true
})

export const WorkerEntity = Entity.make("McpWorker", [Request]).annotate(
  ClusterSchema.ShardGroup,
  ClusterWorkerId.groupOf
)

export const ControlEntity = Entity.make("McpWorkerControl", [Status, Cancel, Close, Events]).annotate(
  ClusterSchema.ShardGroup,
  ClusterWorkerId.groupOf
)
