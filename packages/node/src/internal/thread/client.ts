/**
 * The remote side of `McpWorkers` in any thread, on the caller's thread plane (C106).
 *
 * @internal
 */
import * as Caller from "@mcp-worker/caller/McpWorkerError"
import * as ThreadCaller from "@mcp-worker/caller/ThreadCaller"
import {
  fromCaller,
  type HostUnavailable,
  type InvalidInput,
  type RequestError,
  type UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Pulled from "../shared/pulled.js"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Chunk from "effect/Chunk"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import * as Budget from "../shared/budget.js"
import { checkSavePath, checkSpillDirectory } from "../transport/responseSave.js"
import * as HostEvents from "../host/events.js"
import type * as Protocol from "./protocol.js"
import { openRequest } from "./openRequest.js"
import { traced, tracedWith } from "../shared/traced.js"
import { types } from "node:util"

/** C66 @internal */
export interface RemoteRequestOptions extends McpWorkers.RequestOptions {
  readonly signal?: AbortSignal | undefined
}

/** @internal */
export interface RemoteService
  extends McpWorkers.Lifecycle, Operations.Service<Operations.Requests, RemoteExtra>, AgentHost.AgentHost {
  readonly subscribe: (id: string, options?: { readonly capacity?: number | undefined }) => ReturnType<typeof subscribe>
}

/** `startedAt`: when the caller made the call. @internal */
export interface RemoteExtra {
  readonly signal?: AbortSignal | undefined
  readonly startedAt?: number | undefined
}

const context = { isProxy: types.isProxy, checkSavePath, checkSpillDirectory }

// Only with a real tracer.
const span = (name: string, attributes: Record<string, unknown>) => traced(name, { ...attributes, remote: true })

/** Refused as the host refuses it. */
const budgetOf = (input: unknown, where: "config" | "arguments"): Either.Either<number | undefined, InvalidInput> =>
  Either.mapLeft(Budget.budgetOf(input as Duration.DurationInput | undefined), (message) =>
    Budget.invalidTimeout(where, message)
  )

const checkWorkerId = (id: unknown): Either.Either<string, InvalidInput> => Prepare.checkId(id, "workerId")

const { deadlineOf } = ThreadCaller

/** C66 */
const answerOf = <A, E>(
  caller: ThreadCaller.ThreadCaller,
  post: () => ThreadCaller.Sent,
  signal?: AbortSignal
): Effect.Effect<A, E> =>
  Effect.async<A, E>((resume) => {
    const sent = post()
    sent.answer.then(
      (value) => resume(Exit.succeed(value as A)),
      (error: unknown) => resume(exitOf<E>(error, signal))
    )
    return Effect.sync(() => ThreadCaller.abandon(caller, sent))
  })

const exitOf = <E>(error: unknown, signal: AbortSignal | undefined): Exit.Exit<never, E> =>
  Caller.isMcpWorkerError(error)
    ? Exit.fail(fromCaller(error) as E)
    : (signal?.aborted === true && error === signal.reason) || (error instanceof Error && error.name === "AbortError")
      ? Exit.interrupt(FiberId.none)
      : Exit.die(error)

const send = <O extends Protocol.LifecycleOperation>(
  caller: ThreadCaller.ThreadCaller,
  operation: O
): Effect.Effect<Protocol.SuccessOf<O>, Protocol.FailureOf<O>> =>
  Effect.withFiberRuntime((fiber) =>
    answerOf(caller, () =>
      ThreadCaller.send(caller, operation as ThreadCaller.Lifecycle, OwnerProtocol.traceContextOfFiber(fiber))
    )
  )

/**
 * The first request goes out in this step, so no notification of a call made right after is missed.
 *
 * @internal
 */
export const subscribe = (
  caller: ThreadCaller.ThreadCaller,
  id: string,
  options?: { readonly capacity?: number | undefined }
): Effect.Effect<
  Effect.Effect<
    Chunk.Chunk<McpWorkers.ServerNotification>,
    Option.Option<UnknownWorker | InvalidInput | HostUnavailable>
  >,
  UnknownWorker | InvalidInput,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const workerId = yield* checkWorkerId(id)
    const capacity = yield* HostEvents.capacityOf(options)
    const pull = ThreadCaller.subscription(caller, workerId, capacity)
    return yield* Pulled.pulled((end: boolean) =>
      answerOf<Protocol.EventsBatch, UnknownWorker | InvalidInput | HostUnavailable>(caller, () => pull(end))
    )
  })

/** Subscribes as the stream starts, not when first read. */
const events =
  (caller: ThreadCaller.ThreadCaller): McpWorkers.McpWorkersService["events"] =>
  (id, options) =>
    Stream.unwrapScoped(Effect.map(subscribe(caller, id, options), Stream.repeatEffectChunkOption))

const call = <A>(
  caller: ThreadCaller.ThreadCaller,
  operation: Operations.Operation<any, any, A>,
  id: string,
  args: ReadonlyArray<unknown>,
  options: (Operations.RequestOptions & RemoteExtra) | undefined,
  trace: OwnerProtocol.TraceContext | undefined
): Effect.Effect<A, RequestError> =>
  Effect.suspend(() => {
    // The budget counts from the caller's call.
    const started = options?.startedAt ?? Date.now()
    const prepared = Prepare.prepareFor(operation, id, args, options, context)
    if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
    const { budgetMs, idleMs, params, saveTo, spill, workerId } = prepared.right
    return answerOf<A, RequestError>(
      caller,
      () =>
        ThreadCaller.request(caller, {
          workerId,
          method: operation.method,
          params,
          budgetMs: budgetMs === undefined ? undefined : Math.max(0, budgetMs - (Date.now() - started)),
          idleMs,
          saveTo,
          spill,
          onProgress: options?.onProgress,
          signal: options?.signal,
          trace
        }),
      options?.signal
    )
  })

const answered = <A, E>(operation: Operations.Operation<any, any, A>, effect: Effect.Effect<A, E>) =>
  operation.answer === undefined ? effect : Effect.map(effect, operation.answer as (value: A) => A)

/** @internal */
export const make: Effect.Effect<RemoteService, never, Scope.Scope> = Effect.gen(function* () {
  const caller = yield* Effect.acquireRelease(Effect.sync(ThreadCaller.make), (caller) =>
    Effect.sync(() => ThreadCaller.dispose(caller))
  )

  // The host drops what it cannot read: only checked plain data is posted.
  const checkId = checkWorkerId

  const open: McpWorkers.McpWorkersService["open"] = (input, options) =>
    Effect.suspend(() =>
      Either.match(openRequest(input, options), {
        onLeft: Effect.fail,
        onRight: ({ budgetMs, open }) => send(caller, { _tag: "RemoteOpen", ...open, deadline: deadlineOf(budgetMs) })
      })
    ).pipe(span("McpWorkers.open", {}))

  const request = <A>(
    operation: Operations.Operation<any, any, A>,
    id: string,
    args: ReadonlyArray<unknown>,
    options: (Operations.RequestOptions & RemoteExtra) | undefined
  ): Effect.Effect<A, RequestError> =>
    answered(
      operation,
      tracedWith(operation.span, { workerId: id, ...operation.attributes?.(args), remote: true }, (trace) =>
        call(caller, operation, id, args, options, trace)
      )
    )
  const requests = Operations.derive<RemoteExtra>(request)

  const status: McpWorkers.McpWorkersService["status"] = (id) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => send(caller, { _tag: "RemoteStatus", workerId })
      })
    )

  const cancel: McpWorkers.McpWorkersService["cancel"] = (id, requestId) =>
    Effect.suspend(() =>
      Either.match(Either.all([checkId(id), Prepare.checkId(requestId, "requestId")]), {
        onLeft: Effect.fail,
        onRight: ([workerId, requestId]) => send(caller, { _tag: "RemoteCancel", workerId, requestId })
      })
    )

  const close: McpWorkers.McpWorkersService["close"] = (id, options) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        // As the host's `close`.
        onRight: (workerId) =>
          send(caller, {
            _tag: "RemoteClose",
            workerId,
            deadline: deadlineOf(Either.getOrUndefined(budgetOf(options?.timeout, "config")))
          })
      })
    ).pipe(span("McpWorkers.close", { workerId: id }))

  // References read the caller's environment.
  const base = { open, ...requests, status, cancel, close, events: events(caller) }
  const service: RemoteService = {
    ...AgentHost.extend(base, { environment: () => process.env }),
    subscribe: (id, options) => subscribe(caller, id, options)
  }
  return service
})
/** @internal */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(McpWorkers.McpWorkers, make)
