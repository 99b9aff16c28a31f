// `not_sent` only where nothing left this process: all that can be checked is checked before the entity is called.
import type * as ClusterError from "@effect/cluster/ClusterError"
import type * as Sharding from "@effect/cluster/Sharding"
import type * as Rpc from "@effect/rpc/Rpc"
import type * as RpcClient from "@effect/rpc/RpcClient"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import {
  CloseFailed,
  DeadlineExceeded,
  DeliveryUnknown,
  emptyCleanup,
  HostUnavailable,
  InvalidInput,
  OpenFailed,
  UnknownWorker,
  WorkerBusy
} from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { types } from "node:util"
import * as ClusterWorkerId from "../ClusterWorkerId.js"
import { localIdOf, renameWorker, type Self, withRunner } from "./facade.js"
import * as Protocol from "./protocol.js"
import type { RunnerView } from "./runners.js"

export interface ClientOptions {
  readonly requestTimeoutMs: number
  readonly closeTimeoutMs: number
}

// The transport's errors beside the entity's own.
type EntityClient<Rpcs extends Rpc.Any> = (
  entityId: string
) => RpcClient.RpcClient.From<
  Rpcs,
  ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError
>

interface Client {
  readonly self: Self
  readonly local: Option.Option<McpWorkers.McpWorkersService>
  readonly view: RunnerView
  readonly defaults: ClientOptions
  readonly workers: EntityClient<typeof Protocol.Request>
  readonly control: EntityClient<
    typeof Protocol.Status | typeof Protocol.Cancel | typeof Protocol.Close | typeof Protocol.Events
  >
  /** `Request.supersedes` */
  readonly unanswered: Map<string, string>
}

const maxUnanswered = 4_096

const nameOf = new Map<Operations.Any, string>(
  Object.entries(Operations.requests).map(([name, operation]) => [operation as Operations.Any, name])
)

const deliveryUnknown = (workerId: string, reason: "timeout" | "host_unresponsive") =>
  new DeliveryUnknown({ workerId, requestId: "", reason, delivery: "unknown" })

// The runner may have acted on it.
const deliveryUnknownOf = (workerId: string, requestId: string) =>
  new DeliveryUnknown({ workerId, requestId, reason: "host_unresponsive", delivery: "unknown" })

const invalid = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

// Only the worker's own runner can write saveTo and spills and send progress.
const otherRunner: Operations.ParamsContext = {
  isProxy: types.isProxy,
  checkSavePath: () => "saveTo writes on the worker's own runner: call it there",
  checkSpillDirectory: () => "a spill writes on the worker's own runner: call it there"
}

const progressRefused = (options: Operations.CallToolOptions | undefined): InvalidInput | undefined =>
  options?.onProgress === undefined
    ? undefined
    : invalid("options.onProgress", "progress reaches a caller on the worker's own runner only")

const answered = <A, E>(operation: Operations.Any, effect: Effect.Effect<A, E>): Effect.Effect<unknown, E> =>
  operation.answer === undefined ? effect : Effect.map(effect, operation.answer)

// msgpack has no `undefined`: the runner pads trailing ones back.
const trimmed = (args: ReadonlyArray<unknown>): Array<unknown> => {
  let end = args.length
  while (end > 0 && args[end - 1] === undefined) end--
  return args.slice(0, end)
}

const payloadOf = (
  workerId: string,
  operation: Operations.Any,
  args: ReadonlyArray<unknown>,
  budgetMs: number,
  idleMs: number | undefined,
  options: Operations.CallToolOptions | undefined,
  call: string,
  supersedes: string | undefined,
  trace: OwnerProtocol.TraceContext | undefined
) => ({
  workerId,
  operation: nameOf.get(operation)!,
  args: trimmed(args),
  budgetMs,
  ...(idleMs === undefined ? {} : { idleMs }),
  ...(options?.onTooLarge === "fail" ? { spill: false as const } : {}),
  call,
  ...(supersedes === undefined ? {} : { supersedes }),
  // C83, C84
  ...(trace === undefined ? {} : { trace })
})

const noteUnanswered = (client: Client, id: string, call: string, answered: boolean) => {
  if (answered) {
    if (client.unanswered.get(id) === call) client.unanswered.delete(id)
    return
  }
  client.unanswered.delete(id)
  client.unanswered.set(id, call)
  if (client.unanswered.size > maxUnanswered) client.unanswered.delete(client.unanswered.keys().next().value!)
}

const localFor = (client: Client, id: string): McpWorkers.McpWorkersService | undefined => {
  if (Option.isNone(client.local)) return undefined
  const parts = ClusterWorkerId.parse(id)
  return Option.isSome(parts) && parts.value.group === client.self.group ? client.local.value : undefined
}

// A worker of this runner's group goes to the local registry; its errors name the cluster id.
const viaLocal = <A, E>(
  client: Client,
  id: string,
  use: (local: McpWorkers.McpWorkersService, localId: WorkerId.WorkerId) => Effect.Effect<A, E>
): Effect.Effect<A, E | UnknownWorker> | undefined => {
  const local = localFor(client, id)
  if (local === undefined) return undefined
  return localIdOf(client.self, id).pipe(
    Effect.flatMap((localId) => use(local, localId)),
    Effect.mapError(renameWorker(id))
  )
}

const reachable = (client: Client, id: string): Effect.Effect<void, UnknownWorker> => {
  const parts = ClusterWorkerId.parse(id)
  if (Option.isNone(parts)) return Effect.fail(new UnknownWorker({ workerId: id }))
  return Effect.flatMap(client.view.served(parts.value.group), (served) =>
    served === "gone" ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.void
  )
}

// In the caller's fiber, before the request leaves it.
const currentTrace = Effect.withFiberRuntime<OwnerProtocol.TraceContext | undefined>((fiber) =>
  Effect.succeed(OwnerProtocol.traceContextOfFiber(fiber))
)

const remoteRequest = (
  client: Client,
  operation: Operations.Any,
  id: string,
  args: ReadonlyArray<unknown>,
  requestOptions: Operations.CallToolOptions | undefined
) =>
  Effect.gen(function* () {
    const prepared = Prepare.prepareFor(operation, id, args, requestOptions, otherRunner)
    if (Either.isLeft(prepared)) return yield* prepared.left
    const refused = progressRefused(requestOptions)
    if (refused !== undefined) return yield* refused
    const timeoutMs = prepared.right.budgetMs ?? client.defaults.requestTimeoutMs
    if (!(timeoutMs > 0)) return yield* new DeadlineExceeded({ workerId: id, delivery: "not_sent" })
    const call = randomUUID()
    const supersedes = client.unanswered.get(id)
    let answered = false
    return yield* reachable(client, id).pipe(
      Effect.zipRight(
        Effect.flatMap(currentTrace, (trace) =>
          client
            .workers(id)
            .Request(
              payloadOf(id, operation, args, timeoutMs, prepared.right.idleMs, requestOptions, call, supersedes, trace)
            )
        ).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              answered = Exit.isSuccess(exit) || !Cause.isInterruptedOnly(exit.cause)
              if (answered && supersedes !== undefined) noteUnanswered(client, id, supersedes, true)
            })
          ),
          Effect.catchTags({
            // Refused before the owner saw anything.
            MailboxFull: () => Effect.fail(new WorkerBusy({ workerId: id, requestId: "", delivery: "not_sent" })),
            // The first one may be running.
            AlreadyProcessingMessage: () => Effect.fail(deliveryUnknown(id, "host_unresponsive")),
            PersistenceError: () => Effect.fail(deliveryUnknown(id, "host_unresponsive"))
          }),
          // After the request may have left.
          Effect.catchAllDefect(() => Effect.fail(deliveryUnknown(id, "host_unresponsive")))
        )
      ),
      // In the background, so the budget holds even when the runner cannot hear it.
      Effect.disconnect,
      Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => deliveryUnknown(id, "timeout") }),
      // C39
      Effect.onExit(() => Effect.sync(() => answered || noteUnanswered(client, id, call, false)))
    )
  }).pipe(spanned(operation.span, { workerId: id, cluster: true }))

// C83
const spanned =
  (name: string, attributes: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime<A, E, R>((fiber) =>
      OwnerProtocol.isTracing(fiber) ? Effect.withSpan(effect, name, { attributes }) : effect
    )

const requestsOf = (client: Client) =>
  Operations.derive<{ readonly saveTo?: string | undefined }>((operation, id, args, requestOptions) => {
    const local = localFor(client, id)
    if (local === undefined) return answered(operation, remoteRequest(client, operation, id, args, requestOptions))
    const run = (local as unknown as Record<string, (...args: Array<unknown>) => Effect.Effect<unknown, any>>)[
      nameOf.get(operation)!
    ]
    return Effect.flatMap(localIdOf(client.self, id), (localId) => run(localId, ...args, requestOptions)).pipe(
      Effect.mapError(renameWorker(id))
    )
  })

// C22a; the service's types omit `DeliveryUnknown`, hence the cast.
const controlUnknown = (id: string, requestId: string) => () =>
  deliveryUnknownOf(id, requestId) as unknown as HostUnavailable

const transportUnknown = (id: string, requestId: string) => ({
  MailboxFull: () => Effect.fail(controlUnknown(id, requestId)()),
  AlreadyProcessingMessage: () => Effect.fail(controlUnknown(id, requestId)()),
  PersistenceError: () => Effect.fail(controlUnknown(id, requestId)())
})

type Lost =
  ClusterError.MailboxFull | ClusterError.AlreadyProcessingMessage | ClusterError.PersistenceError | DeliveryUnknown

const lostTags: ReadonlySet<string> = new Set<Lost["_tag"]>([
  "MailboxFull",
  "AlreadyProcessingMessage",
  "PersistenceError",
  "DeliveryUnknown"
])
const isLost = <E extends { readonly _tag: string }>(error: E | Lost): error is Lost => lostTags.has(error._tag)

// C89
const answeredOrUnknown = <A, E extends { readonly _tag: string }, R, E2, R2>(
  reached: Effect.Effect<unknown, E2, R2>,
  sent: Effect.Effect<A, E | Lost, R>,
  id: string,
  requestId: string,
  budgetMs: number
): Effect.Effect<A, E | E2 | HostUnavailable, R | R2> =>
  reached.pipe(
    Effect.zipRight(
      sent.pipe(
        Effect.catchAll((error): Effect.Effect<never, E | HostUnavailable> =>
          isLost(error) ? Effect.fail(controlUnknown(id, requestId)()) : Effect.fail(error)
        ),
        Effect.catchAllDefect(() => Effect.fail(controlUnknown(id, requestId)()))
      )
    ),
    Effect.disconnect,
    Effect.timeoutFail({ duration: Duration.millis(budgetMs), onTimeout: controlUnknown(id, requestId) })
  )

const open = (
  client: Client,
  config: ServerConfig.ServerConfigInput,
  openOptions: McpWorkers.OpenOptions | undefined
): ReturnType<McpWorkers.Lifecycle["open"]> =>
  Option.match(client.local, {
    onNone: () =>
      Effect.fail(
        new OpenFailed({
          stage: "thread",
          message: "this process is a client of the cluster and owns no workers: open on a runner"
        })
      ),
    onSome: (local) => Effect.map(local.open(config, openOptions), (id) => ClusterWorkerId.make(id, client.self.group))
  })

const status = (client: Client, id: string): ReturnType<McpWorkers.Lifecycle["status"]> => {
  const local = viaLocal(client, id, (local, localId) =>
    Effect.map(local.status(localId), (status) => withRunner(client.self, id, status))
  )
  if (local !== undefined) return local
  const budgetMs = client.defaults.requestTimeoutMs
  return answeredOrUnknown(
    reachable(client, id),
    client.control(id).Status({ workerId: id, budgetMs }),
    id,
    "",
    budgetMs
  )
}

const cancel = (client: Client, id: string, requestId: string): ReturnType<McpWorkers.Lifecycle["cancel"]> => {
  const local = viaLocal(client, id, (local, localId) => local.cancel(localId, requestId))
  if (local !== undefined) return local
  const budgetMs = client.defaults.requestTimeoutMs
  return answeredOrUnknown(
    reachable(client, id),
    client.control(id).Cancel({ workerId: id, requestId, budgetMs }),
    id,
    requestId,
    budgetMs
  )
}

const close = (
  client: Client,
  id: string,
  closeOptions: McpWorkers.CloseOptions | undefined
): ReturnType<McpWorkers.Lifecycle["close"]> => {
  const local = viaLocal(client, id, (local, localId) =>
    Effect.map(local.close(localId, closeOptions), (status) => withRunner(client.self, id, status))
  )
  if (local !== undefined) return local
  const timeout = closeOptions?.timeout === undefined ? undefined : Duration.decodeUnknown(closeOptions.timeout)
  const timeoutMs = timeout !== undefined && Option.isSome(timeout) ? Duration.toMillis(timeout.value) : undefined
  // A late answer confirms nothing.
  const unconfirmed = () =>
    new CloseFailed({
      workerId: id,
      message: "the worker's runner did not confirm the close in time; its cleanup is unconfirmed",
      cleanup: emptyCleanup
    })
  const budgetMs = (timeoutMs ?? client.defaults.closeTimeoutMs) + 1_000
  return reachable(client, id).pipe(
    Effect.zipRight(
      client
        .control(id)
        .Close(timeoutMs === undefined ? { workerId: id, budgetMs } : { workerId: id, timeoutMs, budgetMs })
        .pipe(
          Effect.catchTags({
            MailboxFull: () => Effect.fail(unconfirmed()),
            AlreadyProcessingMessage: () => Effect.fail(unconfirmed()),
            PersistenceError: () => Effect.fail(unconfirmed()),
            DeliveryUnknown: () => Effect.fail(unconfirmed())
          }),
          Effect.catchAllDefect(() => Effect.fail(unconfirmed()))
        )
    ),
    Effect.disconnect,
    Effect.timeoutFail({ duration: Duration.millis(budgetMs), onTimeout: unconfirmed })
  )
}

const events = (
  client: Client,
  id: string,
  eventsOptions: McpWorkers.EventsOptions | undefined
): ReturnType<McpWorkers.Lifecycle["events"]> => {
  const local = localFor(client, id)
  if (local !== undefined) {
    return localIdOf(client.self, id).pipe(
      Effect.map((localId) => local.events(localId, eventsOptions)),
      Stream.unwrap,
      Stream.mapError(renameWorker(id))
    )
  }
  const capacity = eventsOptions?.capacity
  return reachable(client, id).pipe(
    Effect.map(() =>
      client
        .control(id)
        .Events(capacity === undefined ? { workerId: id } : { workerId: id, capacity })
        .pipe(
          Stream.catchTags(transportUnknown(id, "")),
          Stream.map((event) => event as McpWorkers.ServerNotification)
        )
    ),
    Stream.unwrap
  )
}

export const make = (options: {
  readonly self: Self
  readonly local: Option.Option<McpWorkers.McpWorkersService>
  readonly sharding: Sharding.Sharding["Type"]
  readonly view: RunnerView
  readonly defaults: ClientOptions
}): Effect.Effect<McpWorkers.McpWorkersService> =>
  Effect.gen(function* () {
    const client: Client = {
      self: options.self,
      local: options.local,
      view: options.view,
      defaults: options.defaults,
      workers: yield* options.sharding.makeClient(Protocol.WorkerEntity),
      control: yield* options.sharding.makeClient(Protocol.ControlEntity),
      unanswered: new Map()
    }
    const service: AgentHost.Base = {
      ...(requestsOf(client) as AgentHost.Base),
      open: (config, openOptions) => open(client, config, openOptions),
      // C94
      status: (id) => Prepare.withId(id, "workerId", (id) => status(client, id)),
      cancel: (id, requestId) =>
        Prepare.withId(id, "workerId", (id) =>
          Prepare.withId(requestId, "requestId", (requestId) => cancel(client, id, requestId))
        ),
      close: (id, closeOptions) => Prepare.withId(id, "workerId", (id) => close(client, id, closeOptions)),
      events: (id, eventsOptions) =>
        Either.match(Prepare.checkId(id, "workerId"), {
          onLeft: (invalid) => Stream.fail(invalid),
          onRight: (id) => events(client, id, eventsOptions)
        })
    }
    // Entries open on this runner, references read from this process's environment.
    return AgentHost.extend(service, { environment: () => process.env })
  })
