// The two entities every runner registers, as `@effect/rpc` definitions: one table from which the caller's client
// and the runner's facade are both derived.
//
// `McpWorker` carries the requests of the operation table to the worker's runner, whose registry alone decides
// whether the worker is busy (C8). `McpWorkerControl` carries what must reach a busy worker (status, cancel, close,
// events).
// Neither is `Persisted`: a call is never written down, so no storage can replay it.
import * as ClusterSchema from "@effect/cluster/ClusterSchema"
import * as Entity from "@effect/cluster/Entity"
import * as Rpc from "@effect/rpc/Rpc"
import * as McpWorkerError from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as WorkerStatus from "@mcp-worker/core/WorkerStatus"
import * as Schema from "effect/Schema"
import * as ClusterWorkerId from "../ClusterWorkerId.js"

export const Request = Rpc.make("Request", {
  payload: {
    workerId: Schema.String,
    operation: Schema.String,
    args: Schema.Array(Schema.Unknown),
    /** The caller's budget: the runner's record keeps the request that long past its stamp (C89). */
    timeoutMs: Schema.Number,
    /** The caller's idle budget in ms (C121), which the worker's owner runs. */
    idleMs: Schema.optional(Schema.Number),
    /** The call's `onTooLarge: "fail"`: the worker's own spill does not apply to it. */
    spill: Schema.optional(Schema.Literal(false)),
    /** The caller's name for this call: random, known to the caller alone. */
    call: Schema.String,
    /** The caller's previous call to this worker, answered without the runner's answer: it ends before this begins. */
    supersedes: Schema.optional(Schema.String),
    /**
     * The caller's span context, when it has a span (C83), with what its trace carries besides the ids (C84): the
     * envelope's ids are the rpc client's span's, which only a runner that traces records.
     */
    trace: Schema.optional(OwnerProtocol.TraceContext)
  },
  success: Schema.Unknown,
  error: McpWorkerError.RequestError
})

/**
 * How long the caller waits for a control message's answer: the runner's record keeps the message that long past its
 * stamp, and refuses it after (C89). A `DeliveryUnknown` is the record's refusal.
 */
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
