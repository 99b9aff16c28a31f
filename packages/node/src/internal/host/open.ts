// C3, C4
import { makeSlot } from "../thread/owner.js"
import * as Worker from "@effect/platform/Worker"
import { InvalidInput, OpenFailed } from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import type * as ToolFilter from "@mcp-worker/core/ToolFilter"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { MessageChannel, type MessagePort, type Worker as NodeThread } from "node:worker_threads"
import * as Budget from "../shared/budget.js"
import * as Connection from "../shared/connection.js"
import { checkSpillDirectory } from "../transport/responseSave.js"
import * as LinePort from "../wire/linePort.js"
import * as OwnerProcess from "./ownerProcess.js"
import * as OwnerThread from "./ownerThread.js"
import { confirmGone, onOwnerMessage, onThreadExit, type Registry } from "./registry.js"
import type { Entry, OwnerHandle } from "./entry.js"
import * as HostMetrics from "../metrics/host.js"

interface Placement extends McpWorkers.OwnerPlacement {
  readonly wire: string
  readonly spill: string | undefined
  /** C59 */
  readonly tools: ToolFilter.ToolFilter | undefined
}

/** @internal */
export const spillOf = (
  config: ServerConfig.ServerConfig,
  options: McpWorkers.OpenOptions | undefined
): Either.Either<string | undefined, InvalidInput> =>
  Either.flatMap(ResultFile.openPolicyOf(options, checkSpillDirectory), (spill) =>
    spill !== undefined && config._tag === "Http"
      ? Either.left(
          new InvalidInput({
            where: "config",
            path: "options.onTooLarge.spill",
            message: "spill is for stdio servers",
            delivery: "not_sent"
          })
        )
      : Either.right(spill)
  )

const spawnFailed = (entry: Entry, owner: string, error: unknown) => {
  const code = (error as { code?: unknown }).code
  Deferred.unsafeDone(
    entry.threadFailure,
    Exit.fail(
      new OpenFailed({
        stage: "thread",
        message: `the owner ${owner} could not start${typeof code === "string" ? ` (${code})` : ""}`
      })
    )
  )
}

const startThread = (entry: Entry, port: MessagePort, placement: Placement): NodeThread => {
  const limit = placement.maxOldGenerationSizeMb
  const thread = OwnerThread.start({
    workerData: { port, marker: entry.marker, config: placement.wire, slot: entry.slot },
    transferList: [port],
    name: `mcp-worker owner ${entry.workerId}`,
    ...(limit === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: limit } })
  })
  entry.threadId = thread.threadId
  return thread
}

const startProcess = (entry: Entry, port: LinePort.LinePort, placement: Placement): ChildProcess => {
  const { child, data } = OwnerProcess.start({ maxOldGenerationSizeMb: placement.maxOldGenerationSizeMb })
  port.attach(data)
  entry.ownerPid = child.pid ?? null
  return child
}

const unrefOwner = (owner: OwnerHandle) => {
  owner.unref()
  if (!("terminate" in owner)) owner.channel?.unref()
}

// C3: the platform Worker would respawn and retry for ever.
const spawner = (
  registry: Registry,
  entry: Entry,
  port: MessagePort | LinePort.LinePort,
  placement: Placement
): Worker.SpawnerFn => {
  let spawned = false
  return () => {
    if (spawned) throw new Error("owners are never respawned")
    spawned = true
    let owner: NodeThread | ChildProcess
    try {
      owner =
        placement.isolation === "process"
          ? startProcess(entry, port as LinePort.LinePort, placement)
          : startThread(entry, port as MessagePort, placement)
    } catch (error) {
      spawnFailed(entry, placement.isolation, error)
      throw error
    }
    entry.thread = owner
    entry.threadAlive = true
    owner.once("exit", onThreadExit(registry, entry))
    return owner
  }
}

const makePorts = (entry: { marker: string }, placement: Placement) => {
  if (placement.isolation === "thread") {
    const channel = new MessageChannel()
    return {
      port: channel.port1 as MessagePort | LinePort.LinePort,
      ownerPort: channel.port2 as MessagePort | LinePort.LinePort,
      close: () => {
        channel.port1.close()
        channel.port2.close()
      }
    }
  }
  const port = LinePort.make()
  port.postMessage({ _tag: "Init", marker: entry.marker, config: placement.wire })
  return { port, ownerPort: port, close: () => port.close() }
}

const makeEntry = (
  registry: Registry,
  config: ServerConfig.ServerConfig,
  placement: Placement,
  name: string | undefined
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(registry.workersScope, ExecutionStrategy.sequential)
    const marker = WorkerId.make()
    const ports = makePorts({ marker }, placement)
    const entry: Entry = {
      workerId: WorkerId.make(),
      marker,
      defaultTimeoutMs: config.timeoutMs ?? registry.defaults.requestMs,
      http: config._tag === "Http",
      scope,
      port: ports.port,
      routes: new Set(),
      slot: placement.isolation === "process" ? undefined : makeSlot(),
      cancels: new Map(),
      syncs: new Map(),
      thread: undefined,
      control: undefined,
      life: Connection.opening,
      threadAlive: false,
      threadFailure: Deferred.unsafeMake<never, OpenFailed>(FiberId.none),
      pending: undefined,
      pid: null,
      threadId: null,
      ownerPid: null,
      era: null,
      protocolVersion: null,
      server: null,
      notifications: Connection.counters(),
      subscribers: new Set(),
      name,
      metrics: registry.defaults.metrics
    }
    yield* Scope.addFinalizer(scope, Effect.sync(ports.close))
    const onMessage = onOwnerMessage(registry, entry)
    ports.port.on("message", onMessage)
    ports.port.unref()
    // C27
    if (!entry.http) registry.reaper.watch(entry.marker)
    registry.opening.add(entry)
    HostMetrics.recount(registry)
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        registry.opening.delete(entry)
        HostMetrics.recount(registry)
      })
    )
    return { entry, ownerPort: ports.ownerPort }
  })

const handshake = (
  registry: Registry,
  entry: Entry,
  ownerPort: MessagePort | LinePort.LinePort,
  placement: Placement,
  budgetMs: number,
  started: number
): Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed> =>
  Effect.gen(function* () {
    const control = yield* Worker.makeSerialized<OwnerProtocol.ControlRequest>({}).pipe(
      Effect.provideService(Worker.WorkerManager, registry.manager),
      Effect.provideService(Worker.Spawner, spawner(registry, entry, ownerPort, placement)),
      Scope.extend(entry.scope),
      Effect.mapError((cause) => new OpenFailed({ stage: "thread", message: String(cause.message) }))
    )
    entry.control = control
    // C93. A thread's `on("message")` refs its port again.
    unrefOwner(entry.thread!)
    const left = yield* Budget.left({ budgetMs, startedMs: started })
    return yield* control.executeEffect(
      new OwnerProtocol.Open({
        workerId: entry.workerId,
        marker: entry.marker,
        config: placement.wire,
        timeoutMs: left,
        handlers: Connection.handlerNames(registry.defaults.handlers),
        ...(registry.defaults.oauth !== undefined ? { oauth: registry.defaults.oauth.settings } : {}),
        ...(placement.spill === undefined ? {} : { spill: placement.spill }),
        ...(placement.tools !== undefined ? { tools: placement.tools } : {})
      })
    )
  }).pipe(
    Effect.catchTags({
      WorkerError: (error) =>
        Effect.fail(new OpenFailed({ stage: "thread", message: `the owner thread failed: ${error.reason}` })),
      ParseError: () => Effect.fail(new OpenFailed({ stage: "thread", message: "the owner sent a malformed reply" }))
    }),
    Effect.raceFirst(Deferred.await(entry.threadFailure)),
    // The owner bounds initialize; this catches a stuck thread.
    Effect.timeoutFail({
      duration: budgetMs + 1_000,
      onTimeout: () => new OpenFailed({ stage: "timeout", message: `the worker did not open within ${budgetMs} ms` })
    })
  )

// C4
const abandon = (registry: Registry, entry: Entry) =>
  Effect.gen(function* () {
    Connection.closed(entry, null)
    yield* Scope.close(entry.scope, Exit.void)
    if (entry.http) return
    const left = yield* confirmGone(registry, entry)
    if (left.activeProcesses > 0) {
      yield* Effect.logError("processes of a failed open are still alive").pipe(
        Effect.annotateLogs({ workerId: entry.workerId, activeProcesses: left.activeProcesses })
      )
    }
  })

/** @internal */
export const open = (
  registry: Registry,
  config: ServerConfig.ServerConfig,
  options: McpWorkers.OpenOptions | undefined,
  where: McpWorkers.OwnerPlacement,
  spill: string | undefined,
  tools: ToolFilter.ToolFilter | undefined
): Effect.Effect<WorkerId.WorkerId, OpenFailed> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const budgetMs =
      (yield* Effect.orDie(Budget.budgetOf(options?.timeout))) ?? config.timeoutMs ?? registry.defaults.openMs
    if (!(where.isolation === "process" ? OwnerProcess.bundleExists() : OwnerThread.bundleExists())) {
      return yield* new OpenFailed({
        stage: "thread",
        message: `the owner ${where.isolation} bundle is missing; run \`npm run build\` in the mcp-worker checkout`
      })
    }
    const limit = registry.defaults.maxResultBytes
    const wire = ServerConfig.toWire(
      config.maxResultBytes === undefined && limit !== undefined ? { ...config, maxResultBytes: limit } : config
    )
    const placement: Placement = { ...where, wire, spill, tools }
    const { entry, ownerPort } = yield* makeEntry(registry, config, placement, options?.name)
    // C4
    const info = yield* handshake(registry, entry, ownerPort, placement, budgetMs, started).pipe(
      Effect.onError(() => abandon(registry, entry)),
      Effect.tapError((error) => Effect.sync(() => HostMetrics.opened(registry, entry, started, error.stage)))
    )
    entry.pid = info.pid
    entry.era = info.era
    entry.protocolVersion = info.protocolVersion
    entry.server = info.server
    entry.tasks = info.tasks
    entry.serves = info.serves
    entry.life = Connection.ready
    registry.opening.delete(entry)
    registry.entries.set(entry.workerId, entry)
    HostMetrics.opened(registry, entry, started, "ready")
    const durationMs = (yield* Clock.currentTimeMillis) - started
    yield* Effect.logWithLevel(registry.defaults.logLevel, "worker opened").pipe(
      Effect.annotateLogs({ workerId: entry.workerId, state: Connection.stateOf(entry.life), durationMs })
    )
    return entry.workerId
  }).pipe(Effect.withSpan("McpWorkers.open", { attributes: { isolation: where.isolation } }))
