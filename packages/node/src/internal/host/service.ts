// C8
import * as Worker from "@effect/platform/Worker"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import type { InvalidInput, OpenFailed, RequestError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as ToolFilter from "@mcp-worker/core/ToolFilter"
import type * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as FiberSet from "effect/FiberSet"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Options } from "../../NodeMcpWorkers.js"
import * as ProcessJob from "../job/processJob.js"
import type * as HostViewFace from "../../HostView.js"
import * as HostMetrics from "../metrics/host.js"
import * as Metrics from "../metrics/metrics.js"
import * as HostViewImpl from "../metrics/view.js"
import { budgetOf, invalidTimeout } from "../shared/budget.js"
import * as Connection from "../shared/connection.js"
import * as KeepAlive from "../shared/keepAlive.js"
import * as HostClose from "./close.js"
import * as HostEvents from "./events.js"
import * as HostOpen from "./open.js"
import * as Reaper from "./reaper.js"
import * as ServerRequests from "./serverRequests.js"
import {
  cancel,
  type Defaults,
  lookup,
  type Registry,
  type Relayed,
  relayTo,
  type RemoteRoutes,
  requests,
  type Sent,
  syncWithOwner
} from "./registry.js"
import { statusOf } from "./entry.js"

/** C18: `openConfig` takes a config a remote thread normalized. @internal */
export interface HostRegistry {
  readonly service: McpWorkers.McpWorkersService
  readonly openConfig: (
    config: ServerConfig.ServerConfig,
    options?: McpWorkers.OpenOptions
  ) => Effect.Effect<WorkerId.WorkerId, OpenFailed | InvalidInput>
  /** The budget counts from now. */
  readonly begin: (
    request: Omit<Relayed, "started">,
    resume: (exit: Exit.Exit<unknown, RequestError>) => void
  ) => Sent | undefined
  readonly refused: (id: string, method: OwnerProtocol.Method, surface: Metrics.Surface) => RequestError | undefined
  /** C117 */
  readonly refusedBefore: <E extends RequestError>(
    id: unknown,
    method: OwnerProtocol.Method,
    surface: Metrics.Surface,
    error: E
  ) => E
  readonly routeRemotes: (routes: RemoteRoutes | undefined) => void
  /** C82 */
  readonly view: HostViewFace.HostViewService
  readonly isOpen: (id: string) => boolean
  /** C156 */
  readonly runsTasks: (id: string) => boolean
  /** C161 */
  readonly servesOf: (id: string) => OwnerProtocol.OpenInfo["serves"]
  readonly pullEvents: (
    id: string,
    subscription: string,
    capacity: number,
    end: boolean
  ) => Effect.Effect<HostEvents.Batch, UnknownWorker | InvalidInput>
}

const defaultsOf = (options: Options): Either.Either<Defaults, Error> => {
  const budget = (name: "requestTimeout" | "openTimeout" | "closeTimeout", fallback: number) =>
    Either.mapBoth(budgetOf(options[name]), {
      onLeft: (message) => new Error(`NodeMcpWorkers.layer(): options.${name}: ${message}`),
      onRight: (ms) => ms ?? fallback
    })
  const limit = options.maxResultBytes
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0 && limit <= ServerConfig.maxMaxResultBytes)) {
    return Either.left(
      new Error(
        `NodeMcpWorkers.layer(): options.maxResultBytes must be a whole number from 1 to ${ServerConfig.maxMaxResultBytes}`
      )
    )
  }
  return Either.all({
    requestMs: budget("requestTimeout", McpWorkers.defaultRequestTimeoutMs),
    openMs: budget("openTimeout", McpWorkers.defaultRequestTimeoutMs),
    closeMs: budget("closeTimeout", McpWorkers.defaultCloseTimeoutMs),
    maxResultBytes: Either.right(limit),
    logLevel: Either.right(options.logLevel ?? LogLevel.Debug),
    handlers: Either.right(options.handlers ?? {}),
    oauth: ServerRequests.oauthSettings(options.oauth, "NodeMcpWorkers.layer()"),
    metrics: Either.right(options.metrics ?? true)
  })
}

const sampleIntervalOf = (options: Options): Either.Either<Duration.Duration, Error> => {
  const interval = Duration.decodeUnknown(options.treeSampleInterval ?? HostMetrics.defaultSampleInterval)
  return Option.isSome(interval) && Duration.greaterThanOrEqualTo(interval.value, HostMetrics.minSampleInterval)
    ? Either.right(interval.value)
    : Either.left(
        new Error("NodeMcpWorkers.layer(): options.treeSampleInterval must be a duration of at least 1 second")
      )
}

/** @internal */
export const make = (options: Options = {}): Effect.Effect<HostRegistry, never, Scope.Scope> =>
  Effect.gen(function* () {
    const defaults = yield* Effect.orDie(defaultsOf(options))
    const layerScope = yield* Effect.scope
    const registry: Registry = {
      defaults,
      // Confirmations run in many fibers.
      cleanupScan: yield* ProcessJob.CleanupScan,
      // Before the close-all finalizer: workers close politely before their scopes are swept.
      workersScope: yield* Scope.fork(layerScope, ExecutionStrategy.parallel),
      entries: new Map(),
      opening: new Set(),
      runFork: yield* FiberSet.makeRuntime<never>(),
      manager: yield* Worker.makeManager.pipe(Effect.provide(NodeWorker.layerWorker)),
      // C27: outlives every close.
      reaper: yield* Reaper.make,
      remoteSubscriptions: new Map(),
      remote: undefined
    }
    // process.exit skips finalizers.
    yield* Connection.exitHook(() => [...registry.entries.values(), ...registry.opening])
    // C7
    yield* Effect.addFinalizer(() => KeepAlive.held(HostClose.closeAll(registry)))
    yield* Effect.forkScoped(HostMetrics.sampleTrees(registry, yield* Effect.orDie(sampleIntervalOf(options))))

    const openConfig: HostRegistry["openConfig"] = (config, openOptions) =>
      Effect.suspend(() => {
        const budget = budgetOf(openOptions?.timeout)
        if (Either.isLeft(budget)) return Effect.fail<OpenFailed | InvalidInput>(invalidTimeout("config", budget.left))
        const placement = McpWorkers.placementOf(openOptions)
        if (Either.isLeft(placement)) return Effect.fail(placement.left)
        const spill = HostOpen.spillOf(config, openOptions)
        if (Either.isLeft(spill)) return Effect.fail(spill.left)
        const name = Metrics.openNameOf(openOptions)
        if (Either.isLeft(name)) return Effect.fail(name.left)
        // C59
        const tools = ToolFilter.check(openOptions?.tools)
        return Either.isLeft(tools)
          ? Effect.fail(tools.left)
          : HostOpen.open(registry, config, openOptions, placement.right, spill.right, tools.right)
      })
    // References read this process's environment. C93
    const service: McpWorkers.McpWorkersService = AgentHost.extend<AgentHost.Base>(
      KeepAlive.heldService({
        open: (input, openOptions) =>
          Effect.flatMap(ServerConfig.normalize(input, process.env, { isProxy: Connection.isProxy }), (config) =>
            openConfig(config, openOptions)
          ),
        ...requests(registry),
        status: (id) =>
          Prepare.withId(id, "workerId", (id) =>
            Effect.flatMap(lookup(registry, id), (entry) => Effect.map(syncWithOwner(entry), () => statusOf(entry)))
          ),
        cancel: (id, requestId) =>
          Prepare.withId(id, "workerId", (id) =>
            Prepare.withId(requestId, "requestId", (requestId) => cancel(registry)(id, requestId))
          ),
        close: (id, closeOptions) =>
          Prepare.withId(id, "workerId", (id) => HostClose.close(registry)(id, closeOptions)),
        events: (id, eventsOptions) =>
          Either.match(Prepare.checkId(id, "workerId"), {
            onLeft: (invalid) => Stream.fail(invalid),
            onRight: (id) => HostEvents.events(registry, id, eventsOptions)
          })
      } satisfies AgentHost.Base),
      { environment: () => process.env }
    )
    return {
      service,
      openConfig,
      ...relayTo(registry),
      isOpen: (id) => registry.entries.has(id),
      runsTasks: (id) => registry.entries.get(id)?.tasks === true,
      servesOf: (id) => registry.entries.get(id)?.serves,
      view: HostViewImpl.make(registry),
      pullEvents: (id, subscription, capacity, end) => HostEvents.pull(registry, id, subscription, capacity, end),
      routeRemotes: (routes) => {
        registry.remote = routes
      }
    }
  })
