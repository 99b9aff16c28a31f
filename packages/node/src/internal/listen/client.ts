/**
 * `McpWorkers` in another process, through a host's listener: every input checked here, in the calling process,
 * then carried by an `RpcClient` of the listener's operations (`rpcs.ts`) over one connection at a time
 * (`connection.ts`). A connection that died is never reopened for what was in flight on it; the next call opens a new
 * one. The service has the remote thread's shape (`remote/layer.ts`), so the Promise client stands on either.
 *
 * @internal
 */
import * as RpcClient from "@effect/rpc/RpcClient"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import {
  DeliveryUnknown,
  HostUnavailable,
  InvalidInput,
  type McpWorkerError,
  type RequestError,
  ResultTooLarge,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as McpWorkersModule from "@mcp-worker/core/McpWorkers"
import * as AgentHost from "@mcp-worker/core/AgentHost"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/Prepare"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as ToolFilter from "@mcp-worker/core/ToolFilter"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Pulled from "../shared/pulled.js"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import * as path from "node:path"
import { types } from "node:util"
import type { ConnectOptions } from "../../NodeMcpWorkers.js"
import * as Budget from "../shared/budget.js"
import { isTracing, tracedWith } from "../shared/traced.js"
import type * as Remote from "../remote/layer.js"
import * as HostEvents from "../host/events.js"
import * as Connection from "./connection.js"
import * as Frames from "./frames.js"
import { ListenRpcs, streamedTag } from "./rpcs.js"

const isProxy = (u: unknown) => types.isProxy(u)
// `saveTo` names a path of the host's file system, which the listener checks (the owner writes it there); here only
// its form is. A spill names a directory of the host's too, which a grant has no say over: refused, saveTo is the way.
const spillRefused = "spill writes on the listener's host: over a socket, use saveTo (under the grant's saveDir)"
const context = {
  isProxy,
  checkSavePath: (target: string) => (path.isAbsolute(target) ? undefined : "saveTo must be an absolute path"),
  checkSpillDirectory: () => spillRefused
}

/** A live connection and the `RpcClient` over it. */
interface Link {
  readonly connection: Connection.Connection
  readonly rpc: (tag: string, payload: unknown, options?: object) => any
  readonly scope: Scope.CloseableScope
}

/** One client's state. */
interface Client {
  readonly path: string
  readonly maxFrameBytes: number
  readonly scope: Scope.Scope
  current: Link | undefined
}

/**
 * The connection for one call, counted in flight on it from this very step (an idle connection closes itself): the
 * current one while it lives, else a new one. A dead one is closed here, and never used again.
 */
const acquire = (client: Client): Effect.Effect<Link> =>
  Effect.suspend(() => {
    const current = client.current
    if (current !== undefined && current.connection.state !== "dead") {
      Connection.use(current.connection, 1)
      return Effect.succeed(current)
    }
    client.current = undefined
    return Effect.gen(function* () {
      if (current !== undefined) yield* Effect.forkIn(Scope.close(current.scope, Exit.void), client.scope)
      // With a real tracer installed, every request carries its span's context to the listener.
      const tracing = yield* Effect.withFiberRuntime((fiber) => Effect.succeed(isTracing(fiber)))
      const scope = yield* Scope.fork(client.scope, ExecutionStrategy.sequential)
      const { connection, protocol } = yield* Scope.extend(Connection.make(client.path, client.maxFrameBytes), scope)
      const rpc = yield* RpcClient.make(ListenRpcs, {
        flatten: true,
        disableTracing: !tracing,
        spanPrefix: "McpWorkers.listen"
      }).pipe(Effect.provideService(RpcClient.Protocol, protocol), Scope.extend(scope))
      const next: Link = { connection, rpc: rpc as unknown as Link["rpc"], scope }
      Connection.use(connection, 1)
      client.current = next
      return next
    })
  })

/** Runs `f` as a call in flight on a connection (which keeps the process alive and is pinged meanwhile). */
const inFlight = <A, E, R>(client: Client, f: (link: Link) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(acquire(client), f, (link) => Effect.sync(() => Connection.use(link.connection, -1)))

/** What a request's caller is told when the listener or the connection ended it, not the server. */
const requestFailure = (id: string, cause: Cause.Cause<unknown>): Cause.Cause<McpWorkerError> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof RpcClientError) {
      const why = error.cause
      if (why instanceof Connection.NotSent) return Cause.fail(why.error)
      const reason = why instanceof Connection.Lost ? why.reason : "connection_lost"
      return Cause.fail(new DeliveryUnknown({ workerId: id, requestId: "", reason, delivery: "unknown" }))
    }
    const typed = error as McpWorkerError
    // An answer over the frame bound was replaced on the way out, before the worker id was known.
    if (typed._tag === "ResultTooLarge" && typed.workerId === "") {
      return Cause.fail(new ResultTooLarge({ ...typed, workerId: id }))
    }
    return Cause.fail(typed)
  }
  if (Cause.isInterruptedOnly(cause)) {
    // The listener stopped the call (it is closing): the request was cancelled at the server, its outcome unknown.
    return Cause.fail(new DeliveryUnknown({ workerId: id, requestId: "", reason: "interrupted", delivery: "unknown" }))
  }
  return cause as Cause.Cause<never>
}

/** What a life-cycle operation's caller is told when the connection ended it: it has no `DeliveryUnknown`. */
const lifecycleFailure = (cause: Cause.Cause<unknown>): Cause.Cause<McpWorkerError> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && failure.value instanceof RpcClientError) {
    const why = failure.value.cause
    if (why instanceof Connection.NotSent) return Cause.fail(why.error)
    return Cause.fail(
      new HostUnavailable({
        message: `the connection to the mcp-worker host was lost before it answered (${String((why as { reason?: string })?.reason ?? why)}); the operation may have happened`,
        delivery: "not_sent"
      })
    )
  }
  if (Option.isNone(failure) && Cause.isInterruptedOnly(cause)) {
    return Cause.fail(new HostUnavailable({ message: "the mcp-worker host closed", delivery: "not_sent" }))
  }
  return cause as Cause.Cause<McpWorkerError>
}

const call = (
  client: Client,
  tag: string,
  payload: unknown,
  onFailure: (cause: Cause.Cause<unknown>) => Cause.Cause<McpWorkerError>
) =>
  inFlight(client, (link) => link.rpc(tag, payload) as Effect.Effect<unknown, unknown>).pipe(
    Effect.catchAllCause((cause) => Effect.failCause(onFailure(cause)))
  ) as Effect.Effect<any, any>

const deadlineOf = (budget: number | undefined, started: number) =>
  budget === undefined ? undefined : started + budget

const tooLarge = (bytes: number, max: number) =>
  new InvalidInput({
    where: "arguments",
    path: "args",
    message: `the request is ${bytes} bytes, over the listener's frame limit of ${max} bytes`,
    delivery: "not_sent"
  })

const names = new Map<Operations.Any, string>(
  Object.entries(Operations.requests).map(([name, operation]) => [operation, name])
)

/** A request of the table: checked here, then sent plain, or streamed when the caller wants progress. */
const request = (client: Client) =>
  Operations.derive<Remote.RemoteExtra>((operation, id, args, options) =>
    Effect.suspend(() => {
      const started = options?.startedAt ?? Date.now()
      // A spill directory is refused here; "fail" travels, so that a worker's own spill does not apply to the call.
      const prepared = Prepare.prepareFor(operation, id, args, options, context)
      if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
      const { budgetMs, params, saveTo, spill } = prepared.right
      const bytes = Buffer.byteLength(params) + 512
      if (bytes > client.maxFrameBytes) return Effect.fail(tooLarge(bytes, client.maxFrameBytes))
      const payload = {
        id,
        params,
        deadline: deadlineOf(budgetMs, started),
        ...(saveTo === undefined ? {} : { saveTo }),
        ...(spill === false ? { spill: false } : {})
      }
      const name = names.get(operation)!
      const onProgress = options?.onProgress
      const send = (trace: OwnerProtocol.TraceContext | undefined) => {
        // The rpc envelope carries the span's ids; what its trace carries besides them travels here (C84).
        const traced = trace === undefined || trace.length < 4 ? payload : { ...payload, trace }
        const sent =
          onProgress === undefined
            ? call(client, name, traced, (cause) => requestFailure(id, cause))
            : streamedRequest(client, streamedTag(name), traced, id, onProgress)
        const answered = operation.answer === undefined ? sent : Effect.map(sent, operation.answer)
        return abortable(answered as Effect.Effect<unknown, RequestError>, options?.signal, id)
      }
      return tracedWith(operation.span, { workerId: id, ...operation.attributes?.(args), listener: true }, send)
    })
  )

/** An aborted signal interrupts the call (the listener cancels its request) and answers `DeliveryUnknown`. */
const abortable = <A>(effect: Effect.Effect<A, RequestError>, signal: AbortSignal | undefined, id: string) =>
  signal === undefined
    ? effect
    : Effect.raceFirst(
        effect,
        Effect.async<never, RequestError>((resume) => {
          const onAbort = () =>
            resume(
              Effect.fail(
                new DeliveryUnknown({ workerId: id, requestId: "", reason: "interrupted", delivery: "unknown" })
              )
            )
          if (signal.aborted) return onAbort()
          signal.addEventListener("abort", onAbort, { once: true })
          return Effect.sync(() => signal.removeEventListener("abort", onAbort))
        })
      )

const streamedRequest = (
  client: Client,
  tag: string,
  payload: unknown,
  id: string,
  onProgress: (progress: Operations.Progress) => void
) =>
  inFlight(client, (link) =>
    Stream.runFoldEffect(
      link.rpc(tag, payload) as Stream.Stream<{ _tag: "Progress" | "Result"; value?: unknown }, unknown>,
      undefined as unknown,
      (result, item) => {
        if (item._tag === "Result") return Effect.succeed(item.value)
        const { _tag, ...progress } = item as { _tag: string } & Operations.Progress
        // The caller's own code: what it throws changes nothing about the request (C29).
        return Effect.as(
          Effect.catchAllCause(
            Effect.try(() => onProgress(progress)),
            (cause) => Effect.logDebug("an onProgress callback threw", cause)
          ),
          result
        )
      }
    )
  ).pipe(Effect.catchAllCause((cause) => Effect.failCause(requestFailure(id, cause))))

/**
 * `events` as the pull the Promise client reads, as a remote thread's (`remote/layer.ts` `subscribe`): the first pull
 * (which subscribes) starts in this very step, and each later one only when the reader asks, so this process holds at
 * most one batch. Leaving the scope early unsubscribes; the connection stays in use meanwhile.
 */
const subscribe = (client: Client, id: string, options?: { readonly capacity?: number | undefined }) =>
  Effect.gen(function* () {
    yield* Prepare.checkId(id, "workerId")
    const capacity = yield* HostEvents.capacityOf(options)
    const subscription = randomBytes(12).toString("base64url")
    const link = yield* Effect.acquireRelease(acquire(client), (link) =>
      Effect.sync(() => Connection.use(link.connection, -1))
    )
    const pull = (end: boolean) =>
      (link.rpc("events", { id, subscription, capacity, end }) as Effect.Effect<HostEvents.Batch, unknown>).pipe(
        Effect.catchAllCause((cause) => Effect.failCause(lifecycleFailure(cause)))
      ) as Effect.Effect<Pulled.Batch<McpWorkers.ServerNotification>, UnknownWorker | InvalidInput | HostUnavailable>
    return yield* Pulled.pulled(pull)
  })

/**
 * A client of the listener at `options.path`, in the current scope. Nothing connects until the first call.
 *
 * @internal
 */
export const make = (options: ConnectOptions): Effect.Effect<Remote.RemoteService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client: Client = {
      path: options.path,
      maxFrameBytes: options.maxFrameBytes ?? Frames.defaultMaxFrameBytes,
      scope: yield* Effect.scope,
      current: undefined
    }
    const budget = (input: unknown) =>
      Either.getOrUndefined(Budget.budgetOf(input as Duration.DurationInput | undefined))
    const lifecycle = (tag: string, id: unknown, payload: object) =>
      Either.match(Prepare.checkId(id, "workerId"), {
        onLeft: Effect.fail,
        onRight: (checked) => call(client, tag, { id: checked, ...payload }, lifecycleFailure)
      })
    const base = {
      open: (input, openOptions) =>
        Effect.suspend(() =>
          Either.all([
            ServerConfig.normalize(input, process.env, { isProxy }),
            Either.mapLeft(Budget.budgetOf(openOptions?.timeout), (message) =>
              Budget.invalidTimeout("config", message)
            ),
            McpWorkersModule.placementOf(openOptions),
            ResultFile.openPolicyOf(openOptions, () => spillRefused),
            ToolFilter.check(openOptions?.tools)
          ]).pipe(
            Either.match({
              onLeft: Effect.fail,
              onRight: ([config, ms, placement, , tools]) =>
                call(
                  client,
                  "open",
                  {
                    config: ServerConfig.toWire(config),
                    deadline: deadlineOf(ms, Date.now()),
                    ...(placement.isolation === "thread" ? {} : { isolation: placement.isolation }),
                    ...(placement.maxOldGenerationSizeMb === undefined
                      ? {}
                      : { maxOldGenerationSizeMb: placement.maxOldGenerationSizeMb }),
                    ...(tools === undefined ? {} : { tools })
                  },
                  lifecycleFailure
                )
            })
          )
        ),
      ...request(client),
      status: (id) => lifecycle("status", id, {}),
      cancel: (id, requestId) =>
        Either.match(Prepare.checkId(requestId, "requestId"), {
          onLeft: Effect.fail,
          onRight: (requestId) => Effect.asVoid(lifecycle("cancel", id, { requestId }))
        }),
      close: (id, closeOptions) =>
        lifecycle("close", id, { deadline: deadlineOf(budget(closeOptions?.timeout), Date.now()) }),
      events: (id, eventsOptions) =>
        Stream.unwrapScoped(Effect.map(subscribe(client, id, eventsOptions), Stream.repeatEffectChunkOption))
    } satisfies Omit<McpWorkers.McpWorkersService, "openAll" | "closeAll" | "describe" | "tools">
    // openAll, closeAll, describe and tools over this process's own operations, as a remote thread's: a document's
    // references read this process's environment (the caller's), and each call travels as any other of it.
    const service: Remote.RemoteService = {
      ...AgentHost.extend(base, { environment: () => process.env }),
      subscribe: (id, eventsOptions) => subscribe(client, id, eventsOptions)
    }
    return service
  })
