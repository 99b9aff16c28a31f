/**
 * The host registry: owns every owner thread of the process, keeps the busy flag and the request ids, and
 * routes requests to owners over their dedicated ports.
 */
import * as Worker from "@effect/platform/Worker"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import {
  DeadlineExceeded,
  DeliveryUnknown,
  emptyCleanup,
  type CleanupSummary,
  CloseFailed,
  type FailureKind,
  InvalidInput,
  OpenFailed,
  RequestNotPending,
  type RequestError,
  UnknownWorker,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { types } from "node:util"
import { MessageChannel, type MessagePort, type Worker as NodeThread } from "node:worker_threads"
import type { Options } from "../NodeMcpWorkers.js"
import * as ProcessJob from "../ProcessJob.js"
import { budgetOf, invalidTimeout } from "./budget.js"
import * as OwnerThread from "./ownerThread.js"
import * as Reaper from "./reaper.js"
import { traced } from "./traced.js"
import { type Entry, refusal, resultOf, settle, statusOf } from "./workerEntry.js"

/**
 * The registry's options, plus test seams: how the host confirms that a worker's processes are gone (defaults to
 * `ProcessJob.stopDetached`), and a look at every owner thread as it is spawned.
 *
 * @internal
 */
export interface HostOptions extends Options {
  readonly confirmCleanup?: typeof ProcessJob.stopDetached
  /** Test seam: sees every owner thread as it is spawned. */
  readonly onThread?: (thread: NodeThread, workerId: string) => void
}

/**
 * The host's service, plus `openConfig` for configs already normalized elsewhere (a remote thread resolves
 * `envFrom` in its own environment, C18).
 *
 * @internal
 */
export interface HostRegistry extends McpWorkers.McpWorkersService {
  readonly openConfig: (
    config: ServerConfig.ServerConfig,
    options?: McpWorkers.OpenOptions
  ) => Effect.Effect<WorkerId.WorkerId, OpenFailed | InvalidInput>
}

const isProxy = (u: unknown) => types.isProxy(u)

interface Defaults {
  readonly requestMs: number
  readonly openMs: number
  readonly closeMs: number
  readonly maxResultBytes: number | undefined
  readonly logLevel: LogLevel.LogLevel
}

/** The registry's defaults; an option that is not a valid budget or limit is refused with where it is. */
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
    logLevel: Either.right(options.logLevel ?? LogLevel.Debug)
  })
}

/**
 * Builds the host registry in the current scope; closing the scope closes every worker.
 *
 * @internal
 */
export const make = (options: HostOptions = {}): Effect.Effect<HostRegistry, never, Scope.Scope> =>
  Effect.gen(function* () {
    const defaults = yield* Effect.orDie(defaultsOf(options))
    const confirmCleanup = options.confirmCleanup ?? ProcessJob.stopDetached
    const layerScope = yield* Effect.scope
    // Every worker's scope is a child of this one, acquired before the close-all finalizer below, so on
    // shutdown the workers are closed politely first and only then are their scopes swept.
    const workersScope = yield* Scope.fork(layerScope, ExecutionStrategy.parallel)
    const entries = new Map<string, Entry>()
    // Workers whose open has not finished: not reachable by id yet, but their processes exist already.
    const opening = new Set<Entry>()
    const runFork = yield* FiberSet.makeRuntime<never>()
    const manager = yield* Worker.makeManager.pipe(Effect.provide(NodeWorker.layerWorker))
    // Acquired before the close-all finalizer below, so it ends after every worker was closed (C27).
    const reaper = yield* Reaper.make

    // Last resort for an exit that skips finalizers (process.exit): no server tree may outlive its host.
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const onExit = () => {
          for (const entry of [...entries.values(), ...opening]) {
            if (entry.pid !== null) ProcessJob.killGroupSync(entry.pid, entry.marker)
          }
        }
        process.on("exit", onExit)
        return onExit
      }),
      (onExit) => Effect.sync(() => process.off("exit", onExit))
    )

    const lookup = (id: string): Effect.Effect<Entry, UnknownWorker> => {
      const entry = entries.get(id)
      return entry === undefined ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.succeed(entry)
    }

    const markFailed = (entry: Entry, kind: FailureKind, message: string, at = new Date().toISOString()) => {
      if (entry.state !== "ready") return
      entry.state = "failed"
      entry.lastFailure = { kind, message, at }
      runFork(Effect.logWarning("worker failed").pipe(Effect.annotateLogs({ workerId: entry.workerId, kind })))
    }

    const onOwnerMessage = (entry: Entry) => (raw: unknown) => {
      const decoded = OwnerProtocol.decodeOwnerMessage(raw)
      if (Either.isLeft(decoded)) return
      const message = decoded.right
      switch (message._tag) {
        case "Success":
          return settle(entry, message.requestId, Exit.succeed(resultOf(message)))
        case "Failure":
          if (message.error._tag === "WorkerFailed") markFailed(entry, message.error.kind, message.error.message)
          return settle(entry, message.requestId, Exit.fail(message.error))
        case "Spawned":
          entry.pid = message.pid
          reaper.group(entry.marker, message.pid)
          return
        case "Failed":
          return markFailed(entry, message.kind, message.message, message.at)
      }
    }

    // The owner thread died on its own: the worker is failed, and the host itself ends its process tree (C20).
    const onThreadExit = (entry: Entry) => (code: number) => {
      entry.threadAlive = false
      if (entry.state === "opening") {
        Deferred.unsafeDone(
          entry.threadFailure,
          Exit.fail(new OpenFailed({ stage: "thread", message: `the owner thread exited during open (code ${code})` }))
        )
        return
      }
      if (entry.closing !== undefined) return
      markFailed(entry, "thread", "the owner thread exited")
      if (entry.pending !== undefined) {
        settle(
          entry,
          entry.pending.requestId,
          Exit.fail(
            new WorkerFailed({
              workerId: entry.workerId,
              kind: "thread",
              message: "the owner thread exited",
              delivery: "unknown"
            })
          )
        )
      }
      runFork(
        Effect.gen(function* () {
          // Closing the worker's scope stops the platform Worker from respawning the thread (C3).
          yield* Scope.close(entry.scope, Exit.void)
          if (entry.http) return
          entry.cleanup = yield* confirmCleanup({ pgid: entry.pid ?? undefined, marker: entry.marker })
          if (entry.cleanup.activeProcesses === 0) reaper.forget(entry.marker)
        })
      )
    }

    const spawner = (entry: Entry, port: MessagePort, config: string): Worker.SpawnerFn => {
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
          // The platform Worker would retry a failed spawn every second: the open fails now instead.
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
        thread.once("exit", onThreadExit(entry))
        options.onThread?.(thread, entry.workerId)
        return thread
      }
    }

    const teardown = (entry: Entry) => Scope.close(entry.scope, Exit.void)

    const openWire = (
      config: ServerConfig.ServerConfig,
      options?: McpWorkers.OpenOptions
    ): Effect.Effect<WorkerId.WorkerId, OpenFailed> =>
      Effect.gen(function* () {
        const started = Date.now()
        const budgetMs = (yield* Effect.orDie(budgetOf(options?.timeout))) ?? config.timeoutMs ?? defaults.openMs
        if (!OwnerThread.bundleExists()) {
          return yield* new OpenFailed({
            stage: "thread",
            message: "the owner thread bundle is missing; run `npm run build` in the mcp-worker checkout"
          })
        }
        const scope = yield* Scope.fork(workersScope, ExecutionStrategy.sequential)
        const channel = new MessageChannel()
        const entry: Entry = {
          workerId: WorkerId.make(),
          marker: WorkerId.make(),
          defaultTimeoutMs: config.timeoutMs ?? defaults.requestMs,
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
          cleanup: null
        }
        yield* Scope.addFinalizer(
          scope,
          Effect.sync(() => {
            channel.port1.close()
            channel.port2.close()
          })
        )
        channel.port1.on("message", onOwnerMessage(entry))
        // Before the owner thread starts the server: a host that dies from here on leaves nothing running (C27).
        if (!entry.http) reaper.watch(entry.marker)
        opening.add(entry)
        yield* Scope.addFinalizer(
          scope,
          Effect.sync(() => opening.delete(entry))
        )

        const wire = ServerConfig.toWire(
          config.maxResultBytes === undefined && defaults.maxResultBytes !== undefined
            ? { ...config, maxResultBytes: defaults.maxResultBytes }
            : config
        )
        const opened = Effect.gen(function* () {
          const control = yield* Worker.makeSerialized<OwnerProtocol.ControlRequest>({}).pipe(
            Effect.provideService(Worker.WorkerManager, manager),
            Effect.provideService(Worker.Spawner, spawner(entry, channel.port2, wire)),
            Scope.extend(scope),
            Effect.mapError((cause) => new OpenFailed({ stage: "thread", message: String(cause.message) }))
          )
          entry.control = control
          const left = Math.max(1, budgetMs - (Date.now() - started))
          return yield* control.executeEffect(
            new OwnerProtocol.Open({
              workerId: entry.workerId,
              marker: entry.marker,
              config: wire,
              timeoutMs: left
            })
          )
        }).pipe(
          Effect.catchTags({
            WorkerError: (error) =>
              Effect.fail(new OpenFailed({ stage: "thread", message: `the owner thread failed: ${error.reason}` })),
            ParseError: () =>
              Effect.fail(new OpenFailed({ stage: "thread", message: "the owner sent a malformed reply" }))
          }),
          // A thread that cannot start or dies while opening ends the open at once.
          Effect.raceFirst(Deferred.await(entry.threadFailure)),
          // The owner bounds initialize itself and reports why; this outer bound only catches a stuck thread.
          Effect.timeoutFail({
            duration: budgetMs + 1_000,
            onTimeout: () =>
              new OpenFailed({ stage: "timeout", message: `the worker did not open within ${budgetMs} ms` })
          })
        )

        // On failure, and on interruption of the caller too: nothing of the attempt is left (C4).
        const info = yield* opened.pipe(
          Effect.onError(() =>
            Effect.gen(function* () {
              entry.state = "closed"
              yield* teardown(entry)
              // Nothing of a failed attempt is left (C4): end whatever the server started, even if the owner
              // could not.
              if (entry.http) return
              const left = yield* confirmCleanup({ pgid: entry.pid ?? undefined, marker: entry.marker })
              if (left.activeProcesses === 0) reaper.forget(entry.marker)
              if (left.activeProcesses > 0) {
                yield* Effect.logError("processes of a failed open are still alive").pipe(
                  Effect.annotateLogs({ workerId: entry.workerId, activeProcesses: left.activeProcesses })
                )
              }
            })
          )
        )
        entry.pid = info.pid
        entry.protocolVersion = info.protocolVersion
        entry.server = info.server
        entry.state = "ready"
        opening.delete(entry)
        entries.set(entry.workerId, entry)
        yield* Effect.logWithLevel(defaults.logLevel, "worker opened").pipe(
          Effect.annotateLogs({ workerId: entry.workerId, state: entry.state, durationMs: Date.now() - started })
        )
        return entry.workerId
      }).pipe(Effect.withSpan("McpWorkers.open"))

    const open: McpWorkers.McpWorkersService["open"] = (input, options) =>
      Effect.flatMap(ServerConfig.normalize(input, process.env, { isProxy }), (config) => openChecked(config, options))

    const openChecked: HostRegistry["openConfig"] = (config, options) =>
      Effect.suspend(() => {
        const budget = budgetOf(options?.timeout)
        return Either.isLeft(budget)
          ? Effect.fail<OpenFailed | InvalidInput>(invalidTimeout("config", budget.left))
          : openWire(config, options)
      })

    const request = (
      id: string,
      method: OwnerProtocol.Method,
      params: string,
      timeout: Duration.DurationInput | undefined,
      started: number
    ): Effect.Effect<unknown, RequestError> =>
      Effect.suspend(() => {
        const budget = budgetOf(timeout)
        if (Either.isLeft(budget)) return Effect.fail(invalidTimeout("arguments", budget.left))
        // The busy check and taking the slot happen in one synchronous step (the register callback): a fiber
        // may yield between any two Effect steps, and two requests must never both pass the check (C8).
        return Effect.async<unknown, RequestError>((resume) => {
          const entry = entries.get(id)
          const refused = refusal(id, entry)
          if (refused !== undefined || entry === undefined) return resume(Effect.fail(refused!))
          const budgetMs = budget.right ?? entry.defaultTimeoutMs
          const left = budgetMs - (Date.now() - started)
          // The deadline passed before the request could go (a remote caller's budget spent between threads, or a
          // zero budget): it is never sent (C22a).
          if (left <= 0)
            return resume(Effect.fail(new DeadlineExceeded({ workerId: entry.workerId, delivery: "not_sent" })))
          const requestId = WorkerId.makeRequestId()
          let timer: ReturnType<typeof setTimeout> | undefined
          const cancel = (reason: "timeout" | "interrupted") => {
            if (entry.pending?.requestId !== requestId) return
            entry.pending = undefined
            entry.port.postMessage({ _tag: "Cancel", requestId, reason })
          }
          entry.pending = {
            requestId,
            complete: (exit) => {
              if (timer !== undefined) clearTimeout(timer)
              resume(exit as Exit.Exit<unknown, RequestError>)
            }
          }
          entry.port.postMessage({ _tag: "Request", requestId, method, params, timeoutMs: left })
          timer = setTimeout(
            () => {
              cancel("timeout")
              resume(
                Exit.fail(
                  new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "timeout", delivery: "unknown" })
                )
              )
            },
            Math.max(0, left)
          )
          return Effect.sync(() => {
            if (timer !== undefined) clearTimeout(timer)
            cancel("interrupted")
          })
        })
      })

    const invalidArguments = (path: string, message: string) =>
      Effect.fail(new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" }))

    const listTools: McpWorkers.McpWorkersService["listTools"] = (id, options) =>
      Effect.suspend(() => {
        const started = Date.now()
        const cursor = options?.cursor
        if (cursor !== undefined && typeof cursor !== "string") {
          return invalidArguments("cursor", "the cursor must be a string")
        }
        const params = cursor === undefined ? "{}" : JSON.stringify({ cursor })
        return request(id, "tools/list", params, options?.timeout, started)
      }).pipe(traced("McpWorkers.listTools", { workerId: id })) as Effect.Effect<
        McpWorkers.ListToolsResult,
        RequestError
      >

    const callTool: McpWorkers.McpWorkersService["callTool"] = (id, name, args, options) =>
      Effect.suspend(() => {
        const started = Date.now()
        if (typeof name !== "string" || name.length === 0) {
          return invalidArguments("name", "the tool name must be a non-empty string")
        }
        if (args !== undefined && !JsonValue.isJsonObject(args)) {
          return invalidArguments("args", "tool arguments must be a plain object")
        }
        const encoded = JsonValue.encode(args ?? {}, { where: "arguments", root: "args", isProxy })
        if (Either.isLeft(encoded)) return Effect.fail(encoded.left)
        // Validated once, stringified once: the params are assembled around the arguments' JSON text.
        const params = `{"name":${JSON.stringify(name)},"arguments":${encoded.right}}`
        return request(id, "tools/call", params, options?.timeout, started)
      }).pipe(traced("McpWorkers.callTool", { workerId: id, tool: name })) as Effect.Effect<
        McpWorkers.CallToolResult,
        RequestError
      >

    const status: McpWorkers.McpWorkersService["status"] = (id) => Effect.map(lookup(id), statusOf)

    const cancel: McpWorkers.McpWorkersService["cancel"] = (id, requestId) =>
      Effect.flatMap(lookup(id), (entry) => {
        const pending = entry.pending
        if (pending === undefined || pending.requestId !== requestId) {
          return Effect.fail(new RequestNotPending({ workerId: entry.workerId, requestId }))
        }
        entry.pending = undefined
        entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled" })
        pending.complete(
          Exit.fail(
            new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "cancelled", delivery: "unknown" })
          )
        )
        return Effect.void
      })

    const closeEntry = (entry: Entry, budgetMs: number): Effect.Effect<WorkerStatus, CloseFailed> =>
      Effect.gen(function* () {
        const started = Date.now()
        const left = () => Math.max(1, budgetMs - (Date.now() - started))
        // A request still in flight ends as interrupted: it was sent, and close cannot know its outcome.
        if (entry.pending !== undefined) {
          const { requestId } = entry.pending
          settle(
            entry,
            requestId,
            Exit.fail(
              new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "interrupted", delivery: "unknown" })
            )
          )
          entry.port.postMessage({ _tag: "Cancel", requestId, reason: "interrupted" })
        }
        let summary: CleanupSummary | undefined
        if (entry.threadAlive && entry.control !== undefined) {
          const control = entry.control
          // `close` runs uninterruptibly (a caller's interruption must not stop a cleanup half way), so each
          // bounded step is made interruptible again for its own timeout to take effect.
          summary = yield* control
            .executeEffect(new OwnerProtocol.Close({ budgetMs: Math.floor(left() * 0.8) }))
            .pipe(Effect.interruptible, Effect.timeout(left()), Effect.option, Effect.map(Option.getOrUndefined))
        }
        // Ends the thread: politely when the owner is done, by `terminate()` when the budget is gone (the polite
        // path then finishes in the background).
        const thread = entry.thread
        yield* teardown(entry).pipe(
          Effect.disconnect,
          Effect.interruptible,
          Effect.timeout(left()),
          Effect.catchAll(() => Effect.sync(() => thread?.terminate()))
        )
        let cleanup = summary ?? emptyCleanup
        if (!entry.http) {
          // Confirm by re-scanning from the host, whatever the owner said (C19).
          const confirmed = yield* confirmCleanup(
            { pgid: entry.pid ?? undefined, marker: entry.marker },
            { budgetMs: left() }
          )
          cleanup = {
            ...confirmed,
            signalled: {
              term: confirmed.signalled.term + (summary?.signalled.term ?? 0),
              kill: confirmed.signalled.kill + (summary?.signalled.kill ?? 0)
            },
            escaped: confirmed.escaped + (summary?.escaped ?? 0),
            durationMs: Date.now() - started
          }
        }
        entry.cleanup = cleanup
        if (cleanup.activeProcesses > 0) {
          // The client is closed and the owner thread is gone: the id stays for a retry (C20), but as `failed`,
          // so a request fails at once (not_sent) instead of being posted to a closed port until its timeout.
          markFailed(entry, "closing", "close could not confirm that every process of the worker ended")
          return yield* new CloseFailed({
            workerId: entry.workerId,
            message: `${cleanup.activeProcesses} process(es) of the worker are still alive; call close again`,
            cleanup
          })
        }
        if (!entry.http) reaper.forget(entry.marker)
        entry.state = "closed"
        entries.delete(entry.workerId)
        yield* Effect.logWithLevel(defaults.logLevel, "worker closed").pipe(
          Effect.annotateLogs({ workerId: entry.workerId, state: entry.state, durationMs: Date.now() - started })
        )
        return statusOf(entry)
      })

    const close: McpWorkers.McpWorkersService["close"] = (id, options) =>
      Effect.flatMap(lookup(id), (entry) => {
        // A second close while one runs joins it.
        if (entry.closing !== undefined) return Deferred.await(entry.closing)
        const closing = Deferred.unsafeMake<WorkerStatus, CloseFailed>(FiberId.none)
        entry.closing = closing
        // Close has no InvalidInput to report: an unusable budget falls back to the default one.
        const budgetMs = Either.getOrUndefined(budgetOf(options?.timeout)) ?? defaults.closeMs
        return closeEntry(entry, budgetMs).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              entry.closing = undefined
            }).pipe(Effect.zipRight(Deferred.done(closing, exit)))
          ),
          Effect.uninterruptible
        )
      }).pipe(Effect.withSpan("McpWorkers.close", { attributes: { workerId: id } }))

    // C7: the host's finalizer closes every worker, in parallel.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        Array.from(entries.keys()),
        (id) =>
          close(id).pipe(
            Effect.catchAll((error) =>
              Effect.logError("worker could not be closed").pipe(
                Effect.annotateLogs({ workerId: id, error: error._tag })
              )
            )
          ),
        { concurrency: "unbounded", discard: true }
      )
    )

    const registry: HostRegistry = { open, openConfig: openChecked, listTools, callTool, status, cancel, close }
    return registry
  })
