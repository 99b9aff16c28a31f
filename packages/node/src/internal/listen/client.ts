/**
 * The Effect face of the caller's socket plane (C46), shaped as the remote thread's.
 *
 * @internal
 */
import * as CallerError from "@mcp-worker/caller/McpWorkerError"
import type * as Plane from "@mcp-worker/caller/Plane"
import * as SocketCaller from "@mcp-worker/caller/SocketCaller"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import {
  type CloseFailed,
  fromCaller,
  type HostUnavailable,
  type InvalidInput,
  type McpWorkerError,
  type OpenFailed,
  type RequestError,
  type RequestNotPending,
  type UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Chunk from "effect/Chunk"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import type { ConnectOptions } from "../../NodeMcpWorkers.js"
import * as HostEvents from "../host/events.js"
import type * as Remote from "../thread/client.js"
import { openRequest } from "../thread/openRequest.js"
import * as Budget from "../shared/budget.js"
import * as Connection from "../shared/connection.js"
import { tracedWith } from "../shared/traced.js"

// `saveTo` is checked against the grant; no grant governs a spill directory.
const context = {
  isProxy: Connection.isProxy,
  checkSavePath: (target: string) => (path.isAbsolute(target) ? undefined : "saveTo must be an absolute path"),
  checkSpillDirectory: () => SocketCaller.spillRefused
}

/** C66 */
const failureOf = <E>(error: unknown, signal: AbortSignal): Effect.Effect<never, E> =>
  CallerError.isMcpWorkerError(error)
    ? Effect.fail(fromCaller(error) as E)
    : signal.aborted && error === signal.reason
      ? Effect.interrupt
      : Effect.die(error)

/** C11, C66 */
const fromPlane = <A, E extends McpWorkerError>(
  start: (signal: AbortSignal) => Promise<unknown>,
  signal?: AbortSignal | undefined
): Effect.Effect<A, E> =>
  Effect.async<A, E>((resume) => {
    const interrupted = new AbortController()
    const aborted = signal === undefined ? interrupted.signal : AbortSignal.any([signal, interrupted.signal])
    start(aborted).then(
      (value) => resume(Effect.succeed(value as A)),
      (error) => resume(failureOf(error, aborted))
    )
    return Effect.sync(() => interrupted.abort())
  })

const names = new Map<Operations.Any, string>(
  Object.entries(Operations.requests).map(([name, operation]) => [operation, name])
)

const request = (plane: Plane.Plane) =>
  Operations.derive<Remote.RemoteExtra>((operation, id, args, options) =>
    Effect.suspend(() => {
      // The budget counts from the caller's call.
      const started = options?.startedAt ?? Date.now()
      const prepared = Prepare.prepareFor(operation, id, args, options, context)
      if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
      const { budgetMs, idleMs, params, saveTo, spill, workerId } = prepared.right
      const send = (trace: Plane.Call["trace"]) => {
        const sent = fromPlane<unknown, RequestError>(
          (signal) =>
            plane.request({
              workerId,
              method: operation.method,
              operation: names.get(operation)!,
              params,
              budgetMs: budgetMs === undefined ? undefined : Math.max(0, started + budgetMs - Date.now()),
              idleMs,
              saveTo,
              spill,
              onProgress: options?.onProgress,
              signal,
              trace
            }),
          options?.signal
        )
        return operation.answer === undefined ? sent : Effect.map(sent, operation.answer)
      }
      return tracedWith(operation.span, { workerId: id, ...operation.attributes?.(args), listener: true }, send)
    })
  )

/** The first pull (which subscribes) starts now, later ones when the reader asks. */
const subscribe = (plane: Plane.Plane, id: string, options?: { readonly capacity?: number | undefined }) =>
  Effect.gen(function* () {
    const workerId = yield* Prepare.checkId(id, "workerId")
    const capacity = yield* HostEvents.capacityOf(options)
    const iterator = yield* Effect.acquireRelease(
      Effect.sync(() => plane.events(workerId, capacity)),
      (iterator) => Effect.promise(() => iterator[Symbol.asyncDispose]())
    )
    let done = false
    return Effect.suspend(() =>
      done
        ? Effect.fail(Option.none())
        : fromPlane<IteratorResult<McpWorkers.ServerNotification>, UnknownWorker | InvalidInput | HostUnavailable>(() =>
            iterator.next()
          ).pipe(
            Effect.mapError((error) => {
              done = true
              return Option.some(error)
            }),
            Effect.flatMap((next) => {
              done = next.done === true
              return next.done === true ? Effect.fail(Option.none()) : Effect.succeed(Chunk.of(next.value))
            })
          )
    )
  })

/** @internal */
export const make = (options: ConnectOptions): Effect.Effect<Remote.RemoteService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const plane = yield* Effect.acquireRelease(
      Effect.sync(() => SocketCaller.make({ path: options.path, maxFrameBytes: options.maxFrameBytes })),
      (plane) => Effect.promise(plane.dispose)
    )
    const budget = (input: unknown) =>
      Either.getOrUndefined(Budget.budgetOf(input as Duration.DurationInput | undefined))
    const lifecycle = <A, E extends McpWorkerError>(id: unknown, f: (workerId: string) => Promise<unknown>) =>
      Either.match(Prepare.checkId(id, "workerId"), {
        onLeft: (invalid): Effect.Effect<A, E | InvalidInput> => Effect.fail(invalid),
        onRight: (workerId) => fromPlane<A, E>(() => f(workerId))
      })
    const base = {
      open: (input, openOptions) => Effect.suspend(() => open(plane, input, openOptions)),
      ...request(plane),
      status: (id) =>
        lifecycle<WorkerStatus, UnknownWorker | HostUnavailable>(id, (workerId) => plane.status(workerId)),
      cancel: (id, requestId) =>
        Either.match(Prepare.checkId(requestId, "requestId"), {
          onLeft: Effect.fail,
          onRight: (requestId) =>
            lifecycle<void, UnknownWorker | RequestNotPending | HostUnavailable>(id, (workerId) =>
              plane.cancel(workerId, requestId)
            )
        }),
      close: (id, closeOptions) =>
        lifecycle<WorkerStatus, UnknownWorker | CloseFailed | HostUnavailable>(id, (workerId) =>
          plane.close(workerId, budget(closeOptions?.timeout))
        ),
      events: (id, eventsOptions) =>
        Stream.unwrapScoped(Effect.map(subscribe(plane, id, eventsOptions), Stream.repeatEffectChunkOption))
    } satisfies Omit<McpWorkers.McpWorkersService, "openAll" | "closeAll" | "describe" | "tools">
    // References read the caller's environment.
    const service: Remote.RemoteService = {
      ...AgentHost.extend(base, { environment: () => process.env }),
      subscribe: (id, eventsOptions) =>
        subscribe(plane, id, eventsOptions) as ReturnType<Remote.RemoteService["subscribe"]>
    }
    return service
  })

/** C18 */
const open = (
  plane: Plane.Plane,
  input: unknown,
  openOptions: McpWorkers.OpenOptions | undefined
): Effect.Effect<WorkerId, InvalidInput | OpenFailed | HostUnavailable> =>
  Either.match(openRequest(input, openOptions), {
    onLeft: (invalid: InvalidInput) => Effect.fail(invalid),
    onRight: (prepared) => fromPlane<WorkerId, OpenFailed | HostUnavailable>(() => plane.open(prepared))
  })
