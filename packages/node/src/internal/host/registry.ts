/** The host's record of its workers, and the requests begun on them (C8–C12, C16). */
import type * as Worker from "@effect/platform/Worker"
import {
  type CleanupSummary,
  DeadlineExceeded,
  DeliveryUnknown,
  type FailureKind,
  InvalidInput,
  type McpWorkerError,
  OpenFailed,
  type RequestError,
  RequestNotPending,
  UnknownWorker,
  WorkerFailed
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import { maxTimeoutMs } from "@mcp-worker/core/ServerConfig"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import type { Handlers, OAuthProvider } from "../../NodeMcpWorkers.js"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as HostEvents from "./events.js"
import * as ServerRequests from "./serverRequests.js"
import type * as Reaper from "./reaper.js"
import {
  type Asker,
  confirmGone as confirmJobGone,
  InFlight,
  isEnded,
  isProxy,
  recordCleanup,
  refusalOf,
  markFailed as markLifeFailed,
  onOwnerMessage as onSharedMessage,
  settle
} from "../shared/connection.js"
import { tracedWith } from "../shared/traced.js"
import { graceMs, ownerChannel } from "../thread/protocol.js"
import { checkSavePath, checkSpillDirectory } from "../transport/responseSave.js"
import { type Entry, heldDirect } from "./entry.js"
import * as HostMetrics from "../metrics/host.js"
import * as Metrics from "../metrics/metrics.js"
/** @internal */
export interface Defaults {
  readonly requestMs: number
  readonly openMs: number
  readonly closeMs: number
  readonly maxResultBytes: number | undefined
  readonly logLevel: LogLevel.LogLevel
  readonly handlers: Handlers
  readonly oauth: { readonly provider: OAuthProvider; readonly settings: string } | undefined
  /** C80 */
  readonly metrics: boolean
}

/** @internal */
export interface Registry {
  readonly defaults: Defaults
  readonly cleanupScan: ProcessJobFace.CleanupScanService
  readonly workersScope: Scope.Scope
  readonly entries: Map<string, Entry>
  /** Not reachable by id yet, but their processes exist already. */
  readonly opening: Set<Entry>
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly manager: Worker.WorkerManager
  readonly reaper: Reaper.Reaper
  readonly remoteSubscriptions: Map<string, HostEvents.RemoteSubscription>
  remote: RemoteRoutes | undefined
}

/** @internal */
export interface RemoteRoutes {
  readonly answer: (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) => void
  readonly ended: (workerId: string, remotes: ReadonlyArray<string>, error: McpWorkerError) => void
}

/** C22a: a remote's request still on the owner's channel may have been taken. @internal */
export const routesEnded = (registry: Registry, entry: Entry): void => {
  for (const answer of entry.cancels.values()) answer(false)
  entry.cancels.clear()
  for (const synced of entry.syncs.values()) synced()
  entry.syncs.clear()
  if (entry.routes.size === 0) return
  const error =
    refusalOf(entry.workerId, registry.entries.get(entry.workerId)) ?? new UnknownWorker({ workerId: entry.workerId })
  const remotes = Array.from(entry.routes)
  entry.routes.clear()
  registry.remote?.ended(entry.workerId, remotes, error)
}

/** @internal */
export const lookup = (registry: Registry, id: string): Effect.Effect<Entry, UnknownWorker> => {
  const entry = registry.entries.get(id)
  return entry === undefined ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.succeed(entry)
}

/** @internal */
export const markFailed = (
  registry: Registry,
  entry: Entry,
  kind: FailureKind,
  message: string,
  at = new Date().toISOString()
): void => {
  if (!markLifeFailed(entry, kind, message, at)) return
  HostEvents.endAll(entry)
  HostMetrics.recount(registry)
  registry.runFork(Effect.logWarning("worker failed").pipe(Effect.annotateLogs({ workerId: entry.workerId, kind })))
}

/** C19 @internal */
export const confirmGone = (registry: Registry, entry: Entry, budgetMs?: number): Effect.Effect<CleanupSummary> =>
  confirmJobGone(entry, registry.cleanupScan, registry.reaper, budgetMs)

// An owner answers at once; past this it is stuck, and the record is read as is.
const syncWaitMs = 1_000

let nextSyncId = 0

/** C30: an owner thread answers remote callers on another channel, so this record may lag their answers. @internal */
export const syncWithOwner = (entry: Entry): Effect.Effect<void> => {
  if (entry.routes.size === 0 || !entry.threadAlive || isEnded(entry.life)) return Effect.void
  return Effect.async<void>((resume) => {
    const syncId = nextSyncId++
    entry.syncs.set(syncId, () => resume(Effect.void))
    entry.port.postMessage({ _tag: "Sync", syncId })
    return Effect.sync(() => entry.syncs.delete(syncId))
  }).pipe(Effect.timeoutTo({ duration: syncWaitMs, onSuccess: () => undefined, onTimeout: () => undefined }))
}

// Not a request already ended, nor one a remote caller's owner thread took directly.
const askerOf = (entry: Entry, requestId: string) =>
  entry.pending?.requestId === requestId ? entry.pending.ask : undefined

/** @internal */
export const onOwnerMessage = (registry: Registry, entry: Entry) => {
  const failed = (failing: Entry, kind: FailureKind, message: string, at?: string) =>
    markFailed(registry, failing, kind, message, at)
  return (raw: unknown): void => {
    const message = onSharedMessage(entry, raw, registry, failed)
    switch (message?._tag) {
      case "CancelAnswer": {
        // C12: the `cancel` is answered a turn before the caller it cancelled.
        const answer = entry.cancels.get(message.requestId)
        entry.cancels.delete(message.requestId)
        answer?.(message.cancelled)
        const { replyTo } = message
        if (!message.cancelled || replyTo === undefined) return
        const error = new DeliveryUnknown({
          workerId: entry.workerId,
          requestId: message.requestId,
          reason: "cancelled",
          delivery: "unknown"
        })
        setImmediate(() => registry.remote?.answer(replyTo, error))
        return
      }
      case "Observed":
        return Metrics.observed(entry, message.requests)
      case "Synced": {
        const synced = entry.syncs.get(message.syncId)
        entry.syncs.delete(message.syncId)
        return synced?.()
      }
      case "ServerRequest":
        return ServerRequests.answer(
          {
            workerId: entry.workerId,
            handlers: registry.defaults.handlers,
            oauth: registry.defaults.oauth?.provider,
            // The user's authorization may take as long as an open may.
            timeoutMs:
              message.method === "oauth/authorize"
                ? Math.max(registry.defaults.openMs, registry.defaults.requestMs)
                : registry.defaults.requestMs,
            reply: (answer) => entry.port.postMessage(answer),
            runFork: registry.runFork,
            // C151: the owner names the request the server asked during; only the caller of that one is asked.
            ask: message.requestId !== undefined ? askerOf(entry, message.requestId) : undefined
          },
          message
        )
      case "Notification":
        return HostEvents.publish(entry, message)
    }
  }
}

/** C20 @internal */
export const onThreadExit =
  (registry: Registry, entry: Entry) =>
  (code: number | null, signal?: string | null): void => {
    entry.threadAlive = false
    const owner = entry.ownerPid === null ? "thread" : "process"
    const how = signal ? `signal ${signal}` : `code ${code}`
    if (entry.life._tag === "Opening") {
      Deferred.unsafeDone(
        entry.threadFailure,
        Exit.fail(new OpenFailed({ stage: "thread", message: `the owner ${owner} exited during open (${how})` }))
      )
      return
    }
    if (entry.life._tag === "Closing") return
    const message = `the owner ${owner} exited (${how})`
    markFailed(registry, entry, "thread", message)
    if (entry.pending !== undefined) {
      const error = new WorkerFailed({
        workerId: entry.workerId,
        kind: "thread",
        message,
        delivery: "unknown"
      })
      settle(entry, entry.pending.requestId, Exit.fail(error))
    }
    routesEnded(registry, entry)
    registry.runFork(
      Effect.gen(function* () {
        // C3: stops the platform Worker from respawning the thread.
        yield* Scope.close(entry.scope, Exit.void)
        if (!entry.http) recordCleanup(entry, yield* confirmGone(registry, entry))
      })
    )
  }

// The host's side of a request.
const context = { isProxy: isProxy, checkSavePath, checkSpillDirectory }

/** The host's own work on every call. */
class RequestInFlight extends InFlight<Entry> {
  readonly since = Date.now()

  protected post(cancel: typeof OwnerProtocol.CancelMessage.Encoded): void {
    this.holder.port.postMessage(cancel)
  }
}

const onGiveUp = (inflight: RequestInFlight) => inflight.unknown("timeout")

const isThread = (entry: Entry): boolean => entry.thread !== undefined && "terminate" in entry.thread

const stdioOnly = (option: "saveTo" | "spill") =>
  new InvalidInput({
    where: "arguments",
    path: option === "saveTo" ? "options.saveTo" : "options.onTooLarge.spill",
    message: `${option} is for stdio servers`,
    delivery: "not_sent"
  })

/** `evicted`: the remote whose route was dropped for it, as routes per worker are bounded. @internal */
export interface Route {
  readonly channel: string
  readonly timeoutMs: number
  readonly evicted: string | undefined
}

/** Routes kept per worker; a remote whose route is dropped is told, and relays its requests again. */
const maxRoutes = 256

/** @internal */
export interface Sent {
  readonly requestId: string
  /** `false` if it had already ended. */
  readonly end: (reason: "interrupted") => boolean
  /** C66 */
  readonly abortOn: (signal: AbortSignal) => void
}

/** From the host's own fibers, a remote thread, a socket peer or another runner. @internal */
export interface Relayed {
  readonly id: string
  readonly method: OwnerProtocol.Method
  /** JSON text of a plain object. */
  readonly params: string
  /** `undefined`: the worker's default. */
  readonly budgetMs: number | undefined
  readonly started: number
  /** C121: the owner runs it. */
  readonly idleMs?: number | undefined
  readonly onProgress?: ((progress: OwnerProtocol.Progress) => void) | undefined
  /** C151 */
  readonly ask?: Asker | undefined
  readonly saveTo?: string | undefined
  /** The call's own `onTooLarge`: a directory, or `false` for none; absent, the worker's. */
  readonly spill?: string | false | undefined
  /** A remote thread given the worker's route (once, before the request is sent): its next requests go direct. */
  readonly remote?: RemoteCaller | undefined
  /** C83 */
  readonly trace?: OwnerProtocol.TraceContext | undefined
  /** C80 */
  readonly surface: Metrics.Surface
  /** C175: the caller gives up by its own timer (a remote thread with a deadline); else the host does, for it. */
  readonly givesUp?: boolean | undefined
}

/** @internal */
export interface RemoteCaller {
  readonly channel: string
  readonly onRoute: (route: Route) => void
}

const routeFor = (entry: Entry, remote: string): Route | undefined => {
  if (entry.routes.has(remote)) return undefined
  entry.routes.add(remote)
  let evicted: string | undefined
  if (entry.routes.size > maxRoutes) {
    for (const oldest of entry.routes) {
      evicted = oldest
      break
    }
    entry.routes.delete(evicted!)
  }
  return { channel: ownerChannel(entry.workerId), timeoutMs: entry.defaultTimeoutMs, evicted }
}

/** C8, C80: only what the host knows without the owner; `undefined`: the owner decides. @internal */
export const refused = (
  registry: Registry,
  id: string,
  method: OwnerProtocol.Method,
  surface: Metrics.Surface
): RequestError | undefined => {
  const entry = registry.entries.get(id)
  const error = refusalOf(id, entry)
  if (error !== undefined && registry.defaults.metrics) Metrics.refusedUnsent(entry, method, surface, error)
  return error
}

/** C117 @internal */
export const refusedBefore = <E extends RequestError>(
  registry: Registry,
  id: unknown,
  method: OwnerProtocol.Method,
  surface: Metrics.Surface,
  error: E
): E => {
  if (!registry.defaults.metrics) return error
  Metrics.refusedUnsent(typeof id === "string" ? registry.entries.get(id) : undefined, method, surface, error)
  return error
}

/**
 * The owner decides busy for every caller (C8). Checking and taking the slot are one synchronous step, run in the
 * register step of the host's own `Effect.async`.
 *
 * @internal
 */
export const begin = (
  registry: Registry,
  request: Relayed,
  callerResume: (exit: Exit.Exit<unknown, RequestError>) => void
): Sent | undefined => {
  const { id, method, saveTo, spill, onProgress, trace, idleMs } = request
  const refusedNow = refused(registry, id, method, request.surface)
  if (refusedNow !== undefined) return void callerResume(Exit.fail(refusedNow))
  const entry = registry.entries.get(id)!
  const observation = registry.defaults.metrics
    ? new Metrics.Observation(entry, method, request.surface, callerResume)
    : undefined
  const resume = observation?.resume ?? callerResume
  const left = (request.budgetMs ?? entry.defaultTimeoutMs) - (Date.now() - request.started)
  // C22a: a budget spent between threads, or a zero one, is never sent.
  if (left <= 0) {
    return void resume(Exit.fail(new DeadlineExceeded({ workerId: entry.workerId, delivery: "not_sent" })))
  }
  // The result is written where the server's bytes are read, which only the stdio transport does.
  if (saveTo !== undefined && entry.http) return void resume(Exit.fail(stdioOnly("saveTo")))
  if (typeof spill === "string" && entry.http) return void resume(Exit.fail(stdioOnly("spill")))
  const requestId = WorkerId.makeRequestId()
  // Only an owner thread can be reached from another thread.
  const remote = request.remote !== undefined && isThread(entry) ? request.remote : undefined
  const route = remote === undefined ? undefined : routeFor(entry, remote.channel)
  if (route !== undefined) remote!.onRoute(route)
  const inflight = new RequestInFlight(entry, requestId, resume, onProgress, request.ask)
  entry.pending = inflight
  observation?.sent()
  const deadline = Date.now() + left
  entry.port.postMessage(
    onProgress === undefined &&
      saveTo === undefined &&
      spill === undefined &&
      trace === undefined &&
      idleMs === undefined
      ? { _tag: "Request", requestId, method, params: request.params, deadline }
      : {
          _tag: "Request",
          requestId,
          method,
          params: request.params,
          deadline,
          ...(idleMs === undefined ? {} : { idleMs }),
          ...(onProgress === undefined ? {} : { progress: true }),
          ...(saveTo === undefined ? {} : { saveTo }),
          ...(spill === undefined ? {} : { spill }),
          ...(trace === undefined ? {} : { trace })
        }
  )
  // C175: the owner answers at the deadline; this is for an owner that cannot.
  if (request.givesUp !== true) inflight.timer = setTimeout(onGiveUp, Math.min(left + graceMs, maxTimeoutMs), inflight)
  return inflight
}

/** A relayed request's budget counts from now. @internal */
export const relayTo = (registry: Registry) => ({
  begin: (request: Omit<Relayed, "started">, resume: (exit: Exit.Exit<unknown, RequestError>) => void) =>
    begin(registry, { ...request, started: Date.now() }, resume),
  refused: (id: string, method: OwnerProtocol.Method, surface: Metrics.Surface) =>
    refused(registry, id, method, surface),
  refusedBefore: <E extends RequestError>(
    id: unknown,
    method: OwnerProtocol.Method,
    surface: Metrics.Surface,
    error: E
  ) => refusedBefore(registry, id, method, surface, error)
})

/** Arguments are checked and encoded in the request's own register step. @internal */
export const requests = (registry: Registry): Operations.Service<Operations.Requests, SignalOption> =>
  Operations.derive<SignalOption>((operation, id, args, options) => {
    // The span's context goes to the owner with the request: its span of it is a child of this one.
    const traced = tracedWith(operation.span, { workerId: id, ...operation.attributes?.(args) }, (trace) =>
      request(registry, operation, id, args, options, trace)
    )
    return operation.answer === undefined ? traced : Effect.map(traced, operation.answer)
  })

/** C66 @internal */
export interface SignalOption {
  readonly signal?: AbortSignal | undefined
}

const request = (
  registry: Registry,
  operation: Operations.Any,
  id: string,
  args: ReadonlyArray<unknown>,
  options: (Operations.RequestOptions & SignalOption) | undefined,
  trace: OwnerProtocol.TraceContext | undefined
) =>
  Effect.async<unknown, RequestError>((resume) => {
    // Aborted between the call and now: nothing was sent, so nothing is (C66).
    if (options?.signal?.aborted === true) return resume(Exit.interrupt(FiberId.none))
    const started = Date.now()
    const prepared = Prepare.prepareFor(operation, id, args, options, context)
    if (Either.isLeft(prepared)) {
      return resume(Exit.fail(refusedBefore(registry, id, operation.method, "host", prepared.left)))
    }
    const { budgetMs, idleMs, params, saveTo, spill, workerId } = prepared.right
    const sent = begin(
      registry,
      {
        id: workerId,
        method: operation.method,
        params,
        budgetMs,
        started,
        idleMs,
        onProgress: options?.onProgress,
        saveTo,
        spill,
        trace,
        surface: "host"
      },
      resume
    )
    if (sent === undefined) return undefined
    const signal = options?.signal
    if (signal !== undefined) sent.abortOn(signal)
    return Effect.sync(() => sent.end("interrupted"))
  })

/**
 * C12: only the owner can say it cancelled a request it took straight from a remote.
 *
 * @internal
 */
export const cancel =
  (registry: Registry): McpWorkers.McpWorkersService["cancel"] =>
  (id, requestId) =>
    Effect.flatMap(lookup(registry, id), (entry) => {
      const notPending = new RequestNotPending({ workerId: entry.workerId, requestId })
      const pending = entry.pending
      if (pending !== undefined && pending.requestId === requestId) {
        pending.unknown("cancelled")
        return Effect.void
      }
      if (heldDirect(entry)?.requestId !== requestId || entry.cancels.has(requestId)) return Effect.fail(notPending)
      return Effect.async<void, RequestNotPending>((resume) => {
        entry.cancels.set(requestId, (cancelled) => resume(cancelled ? Effect.void : Effect.fail(notPending)))
        entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled", confirm: true })
        return Effect.sync(() => entry.cancels.delete(requestId))
      })
    })
