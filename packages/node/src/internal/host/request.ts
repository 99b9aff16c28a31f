/**
 * Requests from the host's side: the busy check and the request id (C8), the caller's whole budget (C9), the exact
 * cancel on timeout, interruption or `cancel` (C10–C12), and the plain-data check of arguments (C16).
 */
import {
  DeadlineExceeded,
  DeliveryUnknown,
  InvalidInput,
  RequestNotPending,
  type RequestError
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { types } from "node:util"
import { checkSavePath, checkSpillDirectory } from "../transport/responseSave.js"
import { lookup, type Registry } from "./registry.js"
import { ownerChannel } from "../thread/protocol.js"
import { tracedWith } from "../shared/traced.js"
import * as Connection from "../shared/connection.js"
import { type Entry, heldDirect } from "./entry.js"
import { type Surface, Observation, refusedUnsent } from "../metrics/metrics.js"

const isProxy = (u: unknown) => types.isProxy(u)

// What the params builders get here, in the calling thread.
const context = { isProxy, checkSavePath, checkSpillDirectory }

/**
 * The request in flight on a worker: what completes it, and what ends it on its timeout or its caller's
 * interruption. One object per request and no closures: this is the host's own work on every call.
 */
class RequestInFlight implements Connection.Pending {
  readonly since = Date.now()
  timer: ReturnType<typeof setTimeout> | undefined = undefined
  signal: AbortSignal | undefined = undefined
  onAbort: (() => void) | undefined = undefined
  constructor(
    readonly entry: Entry,
    readonly requestId: string,
    readonly resume: (exit: Exit.Exit<unknown, RequestError>) => void,
    readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
    readonly ask: Connection.Asker | undefined
  ) {}

  /** The owner's answer, or a cancel or close that ended the request (they have given up the slot). */
  complete(exit: Exit.Exit<unknown, RequestError>): void {
    this.disarm()
    this.resume(exit)
  }

  /** Ends the request without its answer: the owner cancels exactly it. `false` if it had already ended. */
  end(reason: "timeout" | "interrupted"): boolean {
    const entry = this.entry
    if (entry.pending !== this) return false
    entry.pending = undefined
    this.disarm()
    entry.port.postMessage({ _tag: "Cancel", requestId: this.requestId, reason })
    return true
  }

  /** Ends the request, and its caller learns that the outcome is unknown. */
  unknown(reason: "timeout" | "interrupted"): void {
    if (!this.end(reason)) return
    const { entry, requestId } = this
    this.resume(Exit.fail(new DeliveryUnknown({ workerId: entry.workerId, requestId, reason, delivery: "unknown" })))
  }

  /** A caller's signal aborted while the request is in flight ends it as its timeout would, as `interrupted` (C66). */
  abortOn(signal: AbortSignal): void {
    this.signal = signal
    this.onAbort = () => this.unknown("interrupted")
    signal.addEventListener("abort", this.onAbort, { once: true })
  }

  private disarm(): void {
    clearTimeout(this.timer)
    if (this.onAbort !== undefined) this.signal!.removeEventListener("abort", this.onAbort)
  }
}

const onTimeout = (inflight: RequestInFlight) => inflight.unknown("timeout")

const isThread = (entry: Entry): boolean => entry.thread !== undefined && "terminate" in entry.thread

const stdioOnly = (option: "saveTo" | "spill") =>
  new InvalidInput({
    where: "arguments",
    path: option === "saveTo" ? "options.saveTo" : "options.onTooLarge.spill",
    message: `${option} is for stdio servers`,
    delivery: "not_sent"
  })

/**
 * A remote caller's way to the worker's owner thread, given with its first request relayed there: its later requests
 * go straight to `channel`. `evicted`: the remote whose route was dropped for it (routes per worker are bounded).
 *
 * @internal
 */
export interface Route {
  readonly channel: string
  readonly timeoutMs: number
  readonly evicted: string | undefined
}

/** Routes kept per worker; a remote whose route is dropped is told, and relays its requests again. */
const maxRoutes = 256

/** A request sent to its owner: its id, and what ends it on its caller's interruption. @internal */
export interface Sent {
  readonly requestId: string
  /** Ends the request without its answer (the owner cancels exactly it); `false` if it had already ended. */
  readonly end: (reason: "interrupted") => boolean
  /** Ends the request with `DeliveryUnknown{interrupted}` when `signal` aborts while it is in flight. */
  readonly abortOn: (signal: AbortSignal) => void
}

/**
 * A request whose arguments were prepared (`Prepare.prepare`), as the host sends it to the owner: from its own
 * fibers, a remote thread, a socket peer or another runner.
 *
 * @internal
 */
export interface Relayed {
  readonly id: string
  readonly method: OwnerProtocol.Method
  /** JSON text of a plain object. */
  readonly params: string
  /** The caller's budget in ms, counted from `started`; `undefined`: the worker's default. */
  readonly budgetMs: number | undefined
  readonly started: number
  /** The caller's idle budget in ms (C121), which the owner runs. */
  readonly idleMs?: number | undefined
  readonly onProgress?: ((progress: OwnerProtocol.Progress) => void) | undefined
  /** Who answers the server's questions during the request instead of the host's handlers (C151). */
  readonly ask?: Connection.Asker | undefined
  readonly saveTo?: string | undefined
  /** The call's own `onTooLarge`: a directory, or `false` for none; absent, the worker's. */
  readonly spill?: string | false | undefined
  /** A remote thread given the worker's route (once, before the request is sent): its next requests go direct. */
  readonly remote?: RemoteCaller | undefined
  /** The caller's span, when it is tracing: the owner's span of the request is its child (C83). */
  readonly trace?: OwnerProtocol.TraceContext | undefined
  /** Where the request came from, for its metrics (C80). */
  readonly surface: Surface
}

/** A remote thread that may be given the worker's route. @internal */
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

/**
 * The host's refusal of a request to `id` now, from what it knows without the owner (unknown, closing or failed, its
 * own request still in flight), counted where it ends (C80); `undefined` when it would be sent, and the owner decides
 * (C8).
 *
 * @internal
 */
export const refused = (
  registry: Registry,
  id: string,
  method: OwnerProtocol.Method,
  surface: Surface
): RequestError | undefined => {
  const entry = registry.entries.get(id)
  const error = Connection.refusalOf(id, entry)
  if (error !== undefined && registry.defaults.metrics) refusedUnsent(entry, method, surface, error)
  return error
}

/**
 * Counts a request refused before the registry was asked (its arguments, its id, a listener's grant or closing),
 * against the worker `id` names when it names one (C117). Gives back `error`.
 *
 * @internal
 */
export const refusedBefore = <E extends RequestError>(
  registry: Registry,
  id: unknown,
  method: OwnerProtocol.Method,
  surface: Surface,
  error: E
): E => {
  if (!registry.defaults.metrics) return error
  refusedUnsent(typeof id === "string" ? registry.entries.get(id) : undefined, method, surface, error)
  return error
}

/**
 * Starts one request: refuses it (`resume` is called at once) or sends it. What the host refuses itself is what it
 * knows without the owner: an unknown id, a worker that is not ready, a spent budget, and its own request still in
 * flight; the owner decides busy for every caller (C8). Checking and taking the slot are one synchronous step: the
 * host's own requests run it as the register step of their `Effect.async`.
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
    ? new Observation(entry, method, request.surface, callerResume)
    : undefined
  const resume = observation?.resume ?? callerResume
  const left = (request.budgetMs ?? entry.defaultTimeoutMs) - (Date.now() - request.started)
  // The deadline passed before the request could go (a remote caller's budget spent between threads, or a zero
  // budget): it is never sent (C22a).
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
  inflight.timer = setTimeout(onTimeout, left, inflight)
  return inflight
}

/**
 * The registry's `begin` and `refused`, for requests prepared elsewhere (a remote thread, a socket peer, another
 * runner); a relayed request's budget counts from now.
 *
 * @internal
 */
export const relayTo = (registry: Registry) => ({
  begin: (request: Omit<Relayed, "started">, resume: (exit: Exit.Exit<unknown, RequestError>) => void) =>
    begin(registry, { ...request, started: Date.now() }, resume),
  refused: (id: string, method: OwnerProtocol.Method, surface: Surface) => refused(registry, id, method, surface),
  refusedBefore: <E extends RequestError>(id: unknown, method: OwnerProtocol.Method, surface: Surface, error: E) =>
    refusedBefore(registry, id, method, surface, error)
})

/**
 * Every request operation of the table, on the host's side: arguments checked and encoded in the register step
 * of the request itself, then sent, and its answer read (`answer`: a spill's summary). A span is opened only when
 * tracing is on.
 *
 * @internal
 */
export const requests = (registry: Registry): Operations.Service<Operations.Requests, SignalOption> =>
  Operations.derive<SignalOption>((operation, id, args, options) => {
    // The span's context goes to the owner with the request: its span of it is a child of this one.
    const traced = tracedWith(operation.span, { workerId: id, ...operation.attributes?.(args) }, (trace) =>
      request(registry, operation, id, args, options, trace)
    )
    return operation.answer === undefined ? traced : Effect.map(traced, operation.answer)
  })

/**
 * What the Promise host adds to a request's options: its caller's `AbortSignal`, which ends the request as
 * `DeliveryUnknown{interrupted}` (C66).
 *
 * @internal
 */
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
 * Cancels exactly the request in flight named (C12): the host's own, or one the owner thread took straight from a
 * remote caller, which only the owner can say it cancelled (its caller is then answered by the owner).
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
        entry.pending = undefined
        entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled" })
        pending.complete(
          Exit.fail(
            new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "cancelled", delivery: "unknown" })
          )
        )
        return Effect.void
      }
      if (heldDirect(entry)?.requestId !== requestId || entry.cancels.has(requestId)) return Effect.fail(notPending)
      return Effect.async<void, RequestNotPending>((resume) => {
        entry.cancels.set(requestId, (cancelled) => resume(cancelled ? Effect.void : Effect.fail(notPending)))
        entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled", confirm: true })
        return Effect.sync(() => entry.cancels.delete(requestId))
      })
    })
