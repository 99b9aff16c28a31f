/**
 * The remote side of `McpWorkers`: any thread of the process reaches the host registry (`NodeMcpWorkers.layer()`,
 * built in some other thread or in this one) by worker id, over the protocol in `wire/remoteProtocol.ts`. This module
 * checks each operation's input in the calling thread; `remoteClient.ts` carries it to the host and back.
 *
 * Cost of a call: one message to the host and one back; once the host gave the worker's route, one message to its
 * owner thread and one back.
 *
 * @internal
 */
import {
  type HostUnavailable,
  type InvalidInput,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as AgentHost from "@mcp-worker/core/AgentHost"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/Prepare"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Pulled from "../shared/pulled.js"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Chunk from "effect/Chunk"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import { types } from "node:util"
import * as Budget from "../shared/budget.js"
import { checkSavePath, checkSpillDirectory } from "../transport/responseSave.js"
import * as HostEvents from "../host/events.js"
import * as Protocol from "../wire/remoteProtocol.js"
import * as RemoteClient from "./client.js"
import { openRequest } from "./openRequest.js"
import { contextOf, isTracing, traced } from "../shared/traced.js"

/**
 * Options of a remote request: the `McpWorkers` options plus a caller-local `AbortSignal` (the Promise facade).
 * Aborting it asks the host to interrupt exactly that call and to answer `DeliveryUnknown{reason: "interrupted"}`;
 * a signal aborted before the request was posted sends nothing, and the call is interrupted.
 *
 * @internal
 */
export interface RemoteRequestOptions extends McpWorkers.RequestOptions {
  readonly signal?: AbortSignal | undefined
}

/**
 * `McpWorkers` served by the host of this process, with `signal` on the two requests.
 *
 * @internal
 */
export interface RemoteService
  extends McpWorkers.Lifecycle, Operations.Service<Operations.Requests, RemoteExtra>, AgentHost.AgentHost {
  /** `events` as a pull whose subscription is made when this effect runs (see `subscribe`). */
  readonly subscribe: (id: string, options?: { readonly capacity?: number | undefined }) => ReturnType<typeof subscribe>
}

/**
 * What a remote request takes beyond the core options: the caller-local `AbortSignal`, and when the caller made
 * the call (`Date.now()`), if that was before this effect runs.
 *
 * @internal
 */
export interface RemoteExtra {
  readonly signal?: AbortSignal | undefined
  readonly startedAt?: number | undefined
}

const isProxy = (u: unknown) => types.isProxy(u)

// What the params builders get here, in the calling thread.
const context = { isProxy, checkSavePath, checkSpillDirectory }

// Remote spans say so; like the host's, they are only opened when a real tracer is installed.
const span = (name: string, attributes: Record<string, unknown>) => traced(name, { ...attributes, remote: true })

/**
 * A caller's budget in milliseconds, or `undefined` for the default one, refused exactly as the host refuses it
 * (`InvalidInput` at `options.timeout`), and clamped to the longest timer.
 */
const budgetOf = (input: unknown, where: "config" | "arguments"): Either.Either<number | undefined, InvalidInput> =>
  Either.mapLeft(Budget.budgetOf(input as Duration.DurationInput | undefined), (message) =>
    Budget.invalidTimeout(where, message)
  )

const checkWorkerId = (id: unknown): Either.Either<string, InvalidInput> => Prepare.checkId(id, "workerId")

/** The deadline of a budget that started at `started` (`Date.now()`: one clock for all threads of the process). */
const deadlineOf = (budget: number | undefined, started: number): number | undefined =>
  budget === undefined ? undefined : started + budget

/**
 * Subscribes to a worker's notifications from this thread, in the scope: the subscription's first request goes out in
 * this very step, so the host has it before anything this thread asks afterwards (a call made right after
 * subscribing, whose notifications must not be missed, however long this thread is busy in between). Gives the pull
 * of the batches that follow; each pull takes one batch from the host, so this thread never holds more than that.
 * Leaving the scope early unsubscribes.
 *
 * @internal
 */
export const subscribe = (
  client: RemoteClient.RemoteClient,
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
    const subscription = Protocol.randomId()
    // C30: a call sent straight to the owner could make a notification that reaches the host before this
    // subscription does; the next call goes through the host instead, behind the subscription, which gives the
    // route again.
    client.routes.delete(workerId)
    const pull = (end: boolean) =>
      RemoteClient.send(client, { _tag: "RemoteEvents", workerId, subscription, capacity, end })
    return yield* Pulled.pulled(pull)
  })

/** `events` from this thread: the subscription starts as the stream starts, not when it is first read. */
const events =
  (client: RemoteClient.RemoteClient): McpWorkers.McpWorkersService["events"] =>
  (id, options) =>
    Stream.unwrapScoped(Effect.map(subscribe(client, id, options), Stream.repeatEffectChunkOption))

/**
 * One request of the table, its input checked and the request posted in the register step of one `Effect.async`, as
 * the host does. `trace`: the span the request is part of, when the caller is tracing.
 */
const call = <A>(
  client: RemoteClient.RemoteClient,
  operation: Operations.Operation<any, any, A>,
  id: string,
  args: ReadonlyArray<unknown>,
  options: (Operations.RequestOptions & RemoteExtra) | undefined,
  trace: OwnerProtocol.TraceContext | undefined
): Effect.Effect<A, RequestError> =>
  Effect.async<A, RequestError>((resume) => {
    // The budget counts from the caller's call: the Promise client says when that was (its runtime may start a
    // moment later).
    const started = options?.startedAt ?? Date.now()
    const prepared = Prepare.prepareFor(operation, id, args, options, context)
    if (Either.isLeft(prepared)) return resume(Exit.fail(prepared.left))
    const { budgetMs, params, saveTo: path, spill, workerId } = prepared.right
    const deadline = budgetMs === undefined ? undefined : deadlineOf(budgetMs, started)
    const onProgress = options?.onProgress
    return RemoteClient.start(
      client,
      onProgress === undefined && path === undefined && spill === undefined
        ? // This thread reads `Result`s: the owner thread may answer it itself.
          {
            _tag: "RemoteCall",
            workerId,
            method: operation.method,
            params,
            deadline,
            direct: true
          }
        : {
            _tag: "RemoteCall",
            workerId,
            method: operation.method,
            params,
            deadline,
            ...(path === undefined ? {} : { saveTo: path }),
            ...(spill === undefined ? {} : { spill }),
            // Progress comes through the host, and a success straight from the owner could overtake the last
            // of it (C29).
            ...(onProgress === undefined ? { direct: true } : { progress: true })
          },
      options?.signal,
      onProgress,
      resume,
      trace
    )
  })

/** The answer of a request in this thread, read off the owner's value (`answer`: a spill's summary). */
const answered = <A, E>(operation: Operations.Operation<any, any, A>, effect: Effect.Effect<A, E>) =>
  operation.answer === undefined ? effect : Effect.map(effect, operation.answer as (value: A) => A)

/**
 * Builds a remote client in the current scope. Its channels never keep the thread alive while no call is in
 * flight, and are closed with the scope.
 *
 * @internal
 */
export const make: Effect.Effect<RemoteService, never, Scope.Scope> = Effect.gen(function* () {
  const client = yield* RemoteClient.make

  // Everything is validated here, in the calling thread, so that only plain data in the protocol's shape is ever
  // posted: the host drops a message it cannot read.
  const checkId = checkWorkerId

  const open: McpWorkers.McpWorkersService["open"] = (input, options) =>
    Effect.suspend(() =>
      Either.match(openRequest(input, options), {
        onLeft: Effect.fail,
        onRight: ({ budgetMs, open }) =>
          RemoteClient.send(client, { _tag: "RemoteOpen", ...open, deadline: deadlineOf(budgetMs, Date.now()) })
      })
    ).pipe(span("McpWorkers.open", {}))

  // Every request of the table: its input checked and the request posted in the register step of one
  // `Effect.async`, as the host does; a span only when tracing is on.
  const request = <A>(
    operation: Operations.Operation<any, any, A>,
    id: string,
    args: ReadonlyArray<unknown>,
    options: (Operations.RequestOptions & RemoteExtra) | undefined
  ): Effect.Effect<A, RequestError> =>
    answered(
      operation,
      Effect.withFiberRuntime<A, RequestError>((fiber) =>
        isTracing(fiber)
          ? Effect.withSpan(
              // The span's context goes with the request: the host's span and the owner's are its children.
              Effect.withFiberRuntime((inner) => call(client, operation, id, args, options, contextOf(inner))),
              operation.span,
              { attributes: { workerId: id, ...operation.attributes?.(args), remote: true }, captureStackTrace: false }
            )
          : call(client, operation, id, args, options, undefined)
      )
    )
  const requests = Operations.derive<RemoteExtra>(request)

  const status: McpWorkers.McpWorkersService["status"] = (id) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => RemoteClient.send(client, { _tag: "RemoteStatus", workerId })
      })
    )

  const cancel: McpWorkers.McpWorkersService["cancel"] = (id, requestId) =>
    Effect.suspend(() =>
      Either.match(Either.all([checkId(id), Prepare.checkId(requestId, "requestId")]), {
        onLeft: Effect.fail,
        onRight: ([workerId, requestId]) => RemoteClient.send(client, { _tag: "RemoteCancel", workerId, requestId })
      })
    )

  const close: McpWorkers.McpWorkersService["close"] = (id, options) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        // Like the host's `close`: an unusable budget falls back to the default one (close reports no InvalidInput).
        onRight: (workerId) =>
          RemoteClient.send(client, {
            _tag: "RemoteClose",
            workerId,
            deadline: deadlineOf(Either.getOrUndefined(budgetOf(options?.timeout, "config")), Date.now())
          })
      })
    ).pipe(span("McpWorkers.close", { workerId: id }))

  // openAll, closeAll, describe and tools over this thread's own operations: a document's references read this
  // thread's environment (the caller's), and each call travels as any other of this thread.
  const base = { open, ...requests, status, cancel, close, events: events(client) }
  const service: RemoteService = {
    ...AgentHost.extend(base, { environment: () => process.env }),
    subscribe: (id, options) => subscribe(client, id, options)
  }
  return service
})
/**
 * `McpWorkers` in any thread of a process whose host registry runs in some thread.
 *
 * @internal
 */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(McpWorkers.McpWorkers, make)
