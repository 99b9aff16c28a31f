// Stateless: a rebuilt facade looks the worker up again; nothing is reopened or replayed.
import type * as Entity from "@effect/cluster/Entity"
import type * as Rpc from "@effect/rpc/Rpc"
import type * as Snowflake from "@effect/cluster/Snowflake"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as McpWorkerError from "@mcp-worker/core/McpWorkerError"
import { DeliveryUnknown, InvalidInput, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as WorkerStatus from "@mcp-worker/core/WorkerStatus"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as ClusterWorkerId from "../ClusterWorkerId.js"
import { ControlEntity, type Request, WorkerEntity } from "./protocol.js"
import { RequestRecord, type RequestRecordService } from "./requestRecord.js"

// Its own tag: the layer's `McpWorkers` is the cluster-wide service.
export class LocalWorkers extends Context.Tag("@mcp-worker/cluster/LocalWorkers")<
  LocalWorkers,
  McpWorkers.McpWorkersService
>() {}

// `address` is `null` in a process that is only a client.
export interface Self {
  readonly group: string
  readonly address: string | null
}

export class SelfRunner extends Context.Tag("@mcp-worker/cluster/McpCluster")<SelfRunner, Self>() {}

// The caller holds the cluster id, not the local one.
export const renameWorker =
  <E>(id: string) =>
  (error: E): E => {
    if (typeof error !== "object" || error === null || !("workerId" in error)) return error
    const copy = Object.create(Object.getPrototypeOf(error))
    Object.assign(copy, error, { workerId: id })
    return copy
  }

export const localIdOf = (self: Self, id: string): Effect.Effect<WorkerId.WorkerId, UnknownWorker> => {
  const parts = ClusterWorkerId.parse(id)
  return Option.isSome(parts) && parts.value.group === self.group
    ? Effect.succeed(parts.value.local)
    : Effect.fail(new UnknownWorker({ workerId: id }))
}

export const withRunner = (self: Self, id: string, status: WorkerStatus.WorkerStatus): WorkerStatus.WorkerStatus => ({
  ...status,
  workerId: id,
  runner: { address: self.address ?? "", group: self.group }
})

const operations: Readonly<Record<string, Operations.Any>> = { ...Operations.requests }

const padded = (args: ReadonlyArray<unknown>, arity: number): Array<unknown> =>
  Array.from({ length: arity }, (_, i) => (i < args.length ? args[i] : undefined))

/** C83: the rpc machinery's spans are not the caller's. */
const callerTraced = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  trace: OwnerProtocol.TraceContext | undefined
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    OwnerProtocol.isTracing(fiber)
      ? OwnerProtocol.withCarried(effect, trace)
      : trace === undefined
        ? Effect.mapInputContext(
            effect,
            (context: Context.Context<R>) => Context.omit(Tracer.ParentSpan)(context) as Context.Context<R>
          )
        : Effect.withParentSpan(effect, OwnerProtocol.externalSpanOf(trace))
  )

export const request = (workers: McpWorkers.McpWorkersService, self: Self, payload: Rpc.Payload<typeof Request>) =>
  Effect.flatMap(localIdOf(self, payload.workerId), (local) => {
    const operation = Object.hasOwn(operations, payload.operation) ? operations[payload.operation] : undefined
    if (operation === undefined) {
      return Effect.fail(
        new InvalidInput({
          where: "arguments",
          path: "operation",
          message: "no such operation",
          delivery: "not_sent"
        })
      )
    }
    const run = (workers as unknown as Record<string, (...args: Array<unknown>) => Effect.Effect<unknown, any>>)[
      payload.operation
    ]
    const timeout = Duration.millis(payload.budgetMs)
    // C121: never past the whole budget.
    const idleMs = payload.idleMs === undefined ? undefined : Math.min(payload.idleMs, payload.budgetMs)
    const idle = idleMs === undefined ? {} : { idleTimeout: Duration.millis(idleMs) }
    const options = payload.spill === false ? { timeout, ...idle, onTooLarge: "fail" } : { timeout, ...idle }
    return Effect.map(
      callerTraced(run(local, ...padded(payload.args, operation.arity), options), payload.trace),
      ResultFile.wireOf
    )
  }).pipe(Effect.mapError(renameWorker(payload.workerId)))

/** C39 */
const relay = (
  calls: Map<string, Fiber.RuntimeFiber<unknown, McpWorkerError.RequestError>>,
  handle: Effect.Effect<unknown, McpWorkerError.RequestError>,
  payload: { readonly call: string; readonly supersedes?: string | undefined }
) =>
  Effect.gen(function* () {
    const prior = payload.supersedes === undefined ? undefined : calls.get(payload.supersedes)
    if (prior !== undefined) yield* Fiber.interrupt(prior)
    const running = yield* Effect.forkDaemon(handle)
    calls.set(payload.call, running)
    running.addObserver(() => calls.delete(payload.call))
    return yield* Fiber.join(running).pipe(Effect.onInterrupt(() => Fiber.interrupt(running)))
  })

/** C37, C89 */
const once = <A, E>(
  record: RequestRecordService,
  message: { readonly requestId: Snowflake.Snowflake; readonly payload: { readonly workerId: string } },
  budgetMs: number,
  handle: Effect.Effect<A, E>
): Effect.Effect<A, E | DeliveryUnknown> =>
  Effect.suspend((): Effect.Effect<A, E | DeliveryUnknown> => {
    const refusal = record.admit(message.requestId, budgetMs)
    if (refusal === undefined) return handle
    return Effect.fail(
      new DeliveryUnknown({
        workerId: message.payload.workerId,
        requestId: "",
        reason: refusal === "repeat" ? "host_unresponsive" : "timeout",
        delivery: "unknown"
      })
    )
  })

export const workerHandlers = Effect.gen(function* () {
  const workers = yield* LocalWorkers
  const self = yield* SelfRunner
  const record = yield* RequestRecord
  const calls = new Map<string, Fiber.RuntimeFiber<unknown, McpWorkerError.RequestError>>()
  return WorkerEntity.of({
    Request: (message) =>
      once(
        record,
        message,
        message.payload.budgetMs,
        relay(calls, request(workers, self, message.payload), message.payload)
      )
  })
}) satisfies Effect.Effect<Entity.HandlersFrom<any>, never, any>

// C89: no budget, and a repeat only subscribes again.
export const controlHandlers = Effect.gen(function* () {
  const workers = yield* LocalWorkers
  const self = yield* SelfRunner
  const record = yield* RequestRecord
  return ControlEntity.of({
    Status: (message) =>
      once(record, message, message.payload.budgetMs, status(workers, self, message.payload.workerId)),
    Cancel: (message) => once(record, message, message.payload.budgetMs, cancel(workers, self, message.payload)),
    Close: (message) => once(record, message, message.payload.budgetMs, close(workers, self, message.payload)),
    Events: ({ payload }) =>
      localIdOf(self, payload.workerId).pipe(
        Effect.map((local) =>
          workers.events(local, payload.capacity === undefined ? undefined : { capacity: payload.capacity })
        ),
        Stream.unwrap,
        Stream.mapError(renameWorker(payload.workerId)),
        Stream.catchTag("HostUnavailable", () => Stream.fail(new UnknownWorker({ workerId: payload.workerId })))
      )
  })
})

// To a caller on another runner, a closing registry's worker is gone.
const status = (workers: McpWorkers.McpWorkersService, self: Self, workerId: string) =>
  localIdOf(self, workerId).pipe(
    Effect.flatMap((local) => workers.status(local)),
    Effect.catchTag("InvalidInput", Effect.die),
    Effect.map((status) => withRunner(self, workerId, status)),
    Effect.mapError(renameWorker(workerId)),
    Effect.catchTag("HostUnavailable", () => Effect.fail(new UnknownWorker({ workerId })))
  )

const cancel = (
  workers: McpWorkers.McpWorkersService,
  self: Self,
  payload: { readonly workerId: string; readonly requestId: string }
) =>
  localIdOf(self, payload.workerId).pipe(
    Effect.flatMap((local) => workers.cancel(local, payload.requestId)),
    Effect.catchTag("InvalidInput", Effect.die),
    Effect.mapError(renameWorker(payload.workerId)),
    Effect.catchTag("HostUnavailable", () => Effect.fail(new UnknownWorker({ workerId: payload.workerId })))
  )

const close = (
  workers: McpWorkers.McpWorkersService,
  self: Self,
  payload: { readonly workerId: string; readonly timeoutMs?: number | undefined }
) =>
  localIdOf(self, payload.workerId).pipe(
    Effect.flatMap((local) =>
      workers.close(
        local,
        payload.timeoutMs === undefined ? undefined : { timeout: Duration.millis(payload.timeoutMs) }
      )
    ),
    // The payload's schema made the id a string.
    Effect.catchTag("InvalidInput", Effect.die),
    Effect.map((status) => withRunner(self, payload.workerId, status)),
    Effect.mapError(renameWorker(payload.workerId)),
    Effect.catchTag("HostUnavailable", () => Effect.fail(new UnknownWorker({ workerId: payload.workerId })))
  )
