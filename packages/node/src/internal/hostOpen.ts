/**
 * Opening a worker: its record, its owner thread (spawned once through the platform Worker, never respawned), the
 * `Open` handshake within the budget, and, when anything fails or the caller is interrupted, nothing left (C4).
 */
import * as Worker from "@effect/platform/Worker"
import { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import { MessageChannel, type MessagePort, type Worker as NodeThread } from "node:worker_threads"
import type { Handlers } from "../NodeMcpWorkers.js"
import * as Budget from "./budget.js"
import * as HostEvents from "./hostEvents.js"
import * as OwnerThread from "./ownerThread.js"
import { confirmGone, onOwnerMessage, onThreadExit, type Registry } from "./registry.js"
import type { Entry } from "./workerEntry.js"

/**
 * The spawn function of one worker: it starts its owner thread once. The platform Worker would respawn a dead
 * thread every second, and retry a failed spawn for ever; both would break C3, so a second call throws and a failed
 * spawn fails the open at once.
 */
const spawner = (registry: Registry, entry: Entry, port: MessagePort, config: string): Worker.SpawnerFn => {
  let spawned = false
  return () => {
    if (spawned) throw new Error("owner threads are never respawned")
    spawned = true
    let thread: NodeThread
    try {
      thread = OwnerThread.start({
        // The config rides along so the thread's entry can start the server before it loads the client.
        workerData: { port, marker: entry.marker, config },
        transferList: [port],
        name: `mcp-worker owner ${entry.workerId}`
      })
    } catch (error) {
      const code = (error as { code?: unknown }).code
      Deferred.unsafeDone(
        entry.threadFailure,
        Exit.fail(
          new OpenFailed({
            stage: "thread",
            message: `the owner thread could not start${typeof code === "string" ? ` (${code})` : ""}`
          })
        )
      )
      throw error
    }
    entry.thread = thread
    entry.threadId = thread.threadId
    entry.threadAlive = true
    thread.once("exit", onThreadExit(registry, entry))
    return thread
  }
}

/** A worker's record, in a scope of its own under the registry's, with its data port listened to. */
const makeEntry = (registry: Registry, config: ServerConfig.ServerConfig) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(registry.workersScope, ExecutionStrategy.sequential)
    const channel = new MessageChannel()
    const entry: Entry = {
      workerId: WorkerId.make(),
      marker: WorkerId.make(),
      defaultTimeoutMs: config.timeoutMs ?? registry.defaults.requestMs,
      http: config._tag === "Http",
      scope,
      port: channel.port1,
      thread: undefined,
      control: undefined,
      state: "opening",
      threadAlive: false,
      closing: undefined,
      threadFailure: Deferred.unsafeMake<never, OpenFailed>(FiberId.none),
      pending: undefined,
      pid: null,
      threadId: null,
      protocolVersion: null,
      server: null,
      lastFailure: null,
      cleanup: null,
      notifications: HostEvents.counters(),
      subscribers: new Set(),
      ended: false
    }
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        channel.port1.close()
        channel.port2.close()
      })
    )
    channel.port1.on("message", onOwnerMessage(registry, entry))
    // Before the owner thread starts the server: a host that dies from here on leaves nothing running (C27).
    if (!entry.http) registry.reaper.watch(entry.marker)
    registry.opening.add(entry)
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => registry.opening.delete(entry))
    )
    return { entry, ownerPort: channel.port2 }
  })

const handlerNames = (handlers: Handlers): Array<"elicitation" | "sampling" | "roots"> =>
  (["elicitation", "sampling", "roots"] as const).filter((name) => handlers[name] !== undefined)

/** Spawns the owner thread and runs the `Open` handshake, bounded by the budget and by the thread's own death. */
const handshake = (
  registry: Registry,
  entry: Entry,
  ownerPort: MessagePort,
  wire: string,
  budgetMs: number,
  started: number
): Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed> =>
  Effect.gen(function* () {
    const control = yield* Worker.makeSerialized<OwnerProtocol.ControlRequest>({}).pipe(
      Effect.provideService(Worker.WorkerManager, registry.manager),
      Effect.provideService(Worker.Spawner, spawner(registry, entry, ownerPort, wire)),
      Scope.extend(entry.scope),
      Effect.mapError((cause) => new OpenFailed({ stage: "thread", message: String(cause.message) }))
    )
    entry.control = control
    const left = yield* Budget.left({ budgetMs, startedMs: started })
    return yield* control.executeEffect(
      new OwnerProtocol.Open({
        workerId: entry.workerId,
        marker: entry.marker,
        config: wire,
        timeoutMs: left,
        handlers: handlerNames(registry.defaults.handlers),
        ...(registry.defaults.oauth !== undefined ? { oauth: registry.defaults.oauth.settings } : {})
      })
    )
  }).pipe(
    Effect.catchTags({
      WorkerError: (error) =>
        Effect.fail(new OpenFailed({ stage: "thread", message: `the owner thread failed: ${error.reason}` })),
      ParseError: () => Effect.fail(new OpenFailed({ stage: "thread", message: "the owner sent a malformed reply" }))
    }),
    // A thread that cannot start or dies while opening ends the open at once.
    Effect.raceFirst(Deferred.await(entry.threadFailure)),
    // The owner bounds initialize itself and reports why; this outer bound only catches a stuck thread.
    Effect.timeoutFail({
      duration: budgetMs + 1_000,
      onTimeout: () => new OpenFailed({ stage: "timeout", message: `the worker did not open within ${budgetMs} ms` })
    })
  )

/** Nothing of a failed or interrupted attempt is left (C4): end whatever the server started, even if the owner could not. */
const abandon = (registry: Registry, entry: Entry) =>
  Effect.gen(function* () {
    entry.state = "closed"
    yield* Scope.close(entry.scope, Exit.void)
    if (entry.http) return
    const left = yield* confirmGone(registry, entry)
    if (left.activeProcesses > 0) {
      yield* Effect.logError("processes of a failed open are still alive").pipe(
        Effect.annotateLogs({ workerId: entry.workerId, activeProcesses: left.activeProcesses })
      )
    }
  })

/**
 * Opens a worker for a normalized config: it is reachable by id only once the server completed `initialize`.
 *
 * @internal
 */
export const open = (
  registry: Registry,
  config: ServerConfig.ServerConfig,
  options?: McpWorkers.OpenOptions
): Effect.Effect<WorkerId.WorkerId, OpenFailed> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const budgetMs =
      (yield* Effect.orDie(Budget.budgetOf(options?.timeout))) ?? config.timeoutMs ?? registry.defaults.openMs
    if (!OwnerThread.bundleExists()) {
      return yield* new OpenFailed({
        stage: "thread",
        message: "the owner thread bundle is missing; run `npm run build` in the mcp-worker checkout"
      })
    }
    const { entry, ownerPort } = yield* makeEntry(registry, config)
    const limit = registry.defaults.maxResultBytes
    const wire = ServerConfig.toWire(
      config.maxResultBytes === undefined && limit !== undefined ? { ...config, maxResultBytes: limit } : config
    )
    // On failure, and on interruption of the caller too: nothing of the attempt is left (C4).
    const info = yield* handshake(registry, entry, ownerPort, wire, budgetMs, started).pipe(
      Effect.onError(() => abandon(registry, entry))
    )
    entry.pid = info.pid
    entry.protocolVersion = info.protocolVersion
    entry.server = info.server
    entry.state = "ready"
    registry.opening.delete(entry)
    registry.entries.set(entry.workerId, entry)
    const durationMs = (yield* Clock.currentTimeMillis) - started
    yield* Effect.logWithLevel(registry.defaults.logLevel, "worker opened").pipe(
      Effect.annotateLogs({ workerId: entry.workerId, state: entry.state, durationMs })
    )
    return entry.workerId
  }).pipe(Effect.withSpan("McpWorkers.open"))
