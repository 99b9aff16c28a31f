/**
 * Requests from the host's side: the busy check and the request id (C8), the caller's whole budget (C9), the exact
 * cancel on timeout, interruption or `cancel` (C10–C12), and the plain-data check of arguments (C16).
 */
import {
  DeadlineExceeded,
  DeliveryUnknown,
  InvalidInput,
  RequestNotPending,
  type RequestError,
  WorkerBusy
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/Prepare"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { types } from "node:util"
import { checkSavePath, checkSpillDirectory } from "../transport/responseSave.js"
import { lookup, type Registry } from "./registry.js"
import { ownerChannel } from "../wire/remoteProtocol.js"
import { contextOf, isTracing } from "../shared/traced.js"
import { answerCancel, type Direct, type Pending } from "../shared/connection.js"
import { delivered, type Entry, readDelivered, refusal } from "./entry.js"
import type * as Metrics from "../metrics/metrics.js"
import { Observation } from "../metrics/observe.js"

const isProxy = (u: unknown) => types.isProxy(u)

// What the params builders get here, in the calling thread.
const context = { isProxy, checkSavePath, checkSpillDirectory }

/**
 * The request in flight on a worker: what completes it, and what ends it on its timeout or its caller's
 * interruption. One object per request and no closures: this is the host's own work on every call.
 */
class RequestInFlight implements Pending {
  readonly since = Date.now()
  timer: ReturnType<typeof setTimeout> | undefined = undefined
  cancelling: ((cancelled: boolean) => void) | undefined = undefined
  signal: AbortSignal | undefined = undefined
  onAbort: (() => void) | undefined = undefined
  constructor(
    readonly entry: Entry,
    readonly requestId: string,
    readonly resume: (exit: Exit.Exit<unknown, RequestError>) => void,
    readonly onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
    readonly direct: Direct | undefined
  ) {}

  /** The owner's answer, or a cancel or close that ended the request (they have given up the slot). */
  complete(exit: Exit.Exit<unknown, RequestError>): void {
    this.disarm()
    this.resume(exit)
  }

  /**
   * Ends the request without its answer: the owner cancels exactly it. `false` if it had already ended, which
   * includes a success the owner thread already delivered to a remote caller itself.
   */
  end(reason: "timeout" | "interrupted"): boolean {
    const entry = this.entry
    readDelivered(entry)
    if (entry.pending !== this) return false
    entry.pending = undefined
    this.disarm()
    entry.port.postMessage({ _tag: "Cancel", requestId: this.requestId, reason })
    answerCancel(this, false)
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
 * A remote caller whose call's success an owner thread may post itself, and what is told the route to that owner
 * thread (before the request is sent, so that the route reaches the remote ahead of the success).
 *
 * @internal
 */
export interface DirectCaller {
  readonly replyTo: Direct
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
 * A remote caller's request that the owner thread took directly (its `Started`), recorded as the worker's request in
 * flight and timed like the host's own: `status` and `cancel` name it, the host's own requests are refused meanwhile,
 * and at its deadline the owner cancels exactly it. A request of the host's in flight was sent before the host knew
 * of this one (its `seen` is lower), and the owner refuses it unsent, whenever it reads it (C8).
 *
 * @internal
 */
export const adopt = (
  entry: Entry,
  started: typeof OwnerProtocol.StartedMessage.Type,
  callerResume: (exit: Exit.Exit<unknown, RequestError>) => void
): Sent => {
  const { requestId } = started
  // A remote thread's request, taken by the owner thread: counted here as the host's own are (C80).
  const observation = entry.metrics
    ? new Observation(entry, started.method, "thread", delivered, callerResume)
    : undefined
  observation?.sent()
  const resume = observation?.resume ?? callerResume
  const prior = entry.pending
  if (prior !== undefined) {
    entry.pending = undefined
    prior.complete(Exit.fail(new WorkerBusy({ workerId: entry.workerId, requestId, delivery: "not_sent" })))
    answerCancel(prior, false)
  }
  const inflight = new RequestInFlight(entry, requestId, resume, undefined, started.replyTo)
  entry.pending = inflight
  const left = Math.min(Math.max(0, started.deadline - Date.now()), ServerConfig.maxTimeoutMs)
  inflight.timer = setTimeout(onTimeout, left, inflight)
  return inflight
}

const ignoreEnd = () => {}

/**
 * The host's refusal of a request to `id` now, from its own record of the worker (unknown, closing or failed, busy:
 * C8), counted where it ends (C80); `undefined` when the worker would take it.
 *
 * @internal
 */
export const refused = (
  registry: Registry,
  id: string,
  method: OwnerProtocol.Method,
  surface: Metrics.Surface
): RequestError | undefined => {
  const entry = registry.entries.get(id)
  if (entry !== undefined) readDelivered(entry)
  const error = refusal(id, entry)
  if (error !== undefined && registry.defaults.metrics) {
    new Observation(entry, method, surface, delivered, ignoreEnd).resume(Exit.fail(error))
  }
  return error
}

/**
 * Starts one request: refuses it (`resume` is called at once) or sends it. The busy check and taking the slot are one
 * synchronous step (two requests must never both pass the check, C8): the host's own requests run it as the register
 * step of their `Effect.async` (a fiber may yield between any two Effect steps), the host server in the step that
 * reads a remote thread's request. The budget counts from `started`. `spill`: the call's own `onTooLarge` (a
 * directory, or `false` for none; absent, the worker's). `trace`: the caller's span, when it is tracing, which the
 * owner's span of the request is a child of.
 *
 * @internal
 */
export const begin = (
  registry: Registry,
  id: string,
  method: OwnerProtocol.Method,
  params: string,
  budgetMs: number | undefined,
  started: number,
  onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
  saveTo: string | undefined,
  spill: string | false | undefined,
  direct: DirectCaller | undefined,
  trace: OwnerProtocol.TraceContext | undefined,
  callerResume: (exit: Exit.Exit<unknown, RequestError>) => void,
  surface: Metrics.Surface
): Sent | undefined => {
  const refusedNow = refused(registry, id, method, surface)
  if (refusedNow !== undefined) return void callerResume(Exit.fail(refusedNow))
  const entry = registry.entries.get(id)!
  const observation = registry.defaults.metrics
    ? new Observation(entry, method, surface, delivered, callerResume)
    : undefined
  const resume = observation?.resume ?? callerResume
  const left = (budgetMs ?? entry.defaultTimeoutMs) - (Date.now() - started)
  // The deadline passed before the request could go (a remote caller's budget spent between threads, or a zero
  // budget): it is never sent (C22a).
  if (left <= 0) {
    return void resume(Exit.fail(new DeadlineExceeded({ workerId: entry.workerId, delivery: "not_sent" })))
  }
  // The result is written where the server's bytes are read, which only the stdio transport does.
  if (saveTo !== undefined && entry.http) return void resume(Exit.fail(stdioOnly("saveTo")))
  if (typeof spill === "string" && entry.http) return void resume(Exit.fail(stdioOnly("spill")))
  const requestId = WorkerId.makeRequestId()
  // Only an owner thread can post to another thread's channel; an owner process answers through the host.
  const replyTo = direct !== undefined && isThread(entry) ? direct.replyTo : undefined
  const route = replyTo === undefined ? undefined : routeFor(entry, replyTo.channel)
  if (route !== undefined) direct!.onRoute(route)
  const inflight = new RequestInFlight(entry, requestId, resume, onProgress, replyTo)
  entry.pending = inflight
  const seen = entry.started
  observation?.sent()
  entry.port.postMessage(
    onProgress === undefined && saveTo === undefined && spill === undefined && seen === 0 && trace === undefined
      ? replyTo === undefined
        ? { _tag: "Request", requestId, method, params, timeoutMs: left }
        : {
            _tag: "Request",
            requestId,
            method,
            params,
            timeoutMs: left,
            replyTo
          }
      : {
          _tag: "Request",
          requestId,
          method,
          params,
          timeoutMs: left,
          ...(onProgress === undefined ? {} : { progress: true }),
          ...(saveTo === undefined ? {} : { saveTo }),
          ...(spill === undefined ? {} : { spill }),
          ...(replyTo === undefined ? {} : { replyTo }),
          ...(seen === 0 ? {} : { seen }),
          ...(trace === undefined ? {} : { trace })
        }
  )
  inflight.timer = setTimeout(onTimeout, left, inflight)
  return inflight
}

/**
 * Every request operation of the table, on the host's side: arguments checked and encoded in the register step
 * of the request itself, then sent, and its answer read (`answer`: a spill's summary). A span is opened only when
 * tracing is on.
 *
 * @internal
 */
export const requests = (registry: Registry): Operations.Service<Operations.Requests, SignalOption> =>
  Operations.derive<SignalOption>((operation, id, args, options) => {
    const traced = Effect.withFiberRuntime<unknown, RequestError>((fiber) =>
      isTracing(fiber)
        ? Effect.withSpan(
            // The span's context goes to the owner with the request: its span of it is a child of this one.
            Effect.withFiberRuntime((inner) => request(registry, operation, id, args, options, contextOf(inner))),
            operation.span,
            { attributes: { workerId: id, ...operation.attributes?.(args) }, captureStackTrace: false }
          )
        : request(registry, operation, id, args, options, undefined)
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
    const prepared = Prepare.prepare(operation, args, options, context)
    if (Either.isLeft(prepared)) return resume(Exit.fail(prepared.left))
    const { budgetMs, params, saveTo, spill } = prepared.right
    const sent = begin(
      registry,
      id,
      operation.method,
      params,
      budgetMs,
      started,
      options?.onProgress,
      saveTo,
      spill,
      undefined,
      trace,
      resume,
      "host"
    )
    if (sent === undefined) return undefined
    const signal = options?.signal
    if (signal !== undefined) sent.abortOn(signal)
    return Effect.sync(() => sent.end("interrupted"))
  })

/** Cancels exactly the request in flight named (C12). @internal */
export const cancel =
  (registry: Registry): McpWorkers.McpWorkersService["cancel"] =>
  (id, requestId) =>
    Effect.flatMap(lookup(registry, id), (entry) => {
      readDelivered(entry)
      const pending = entry.pending
      if (pending === undefined || pending.requestId !== requestId || pending.cancelling !== undefined) {
        return Effect.fail(new RequestNotPending({ workerId: entry.workerId, requestId }))
      }
      // The owner thread posts this request's success to its caller itself, and may have posted it already: it says
      // whether it cancelled the request (`CancelAnswer`, handled in `registry.ts`), and only then is it cancelled.
      if (pending.direct !== undefined) {
        return Effect.async<void, RequestNotPending>((resume) => {
          pending.cancelling = (cancelled) =>
            resume(
              cancelled ? Effect.void : Effect.fail(new RequestNotPending({ workerId: entry.workerId, requestId }))
            )
          entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled", confirm: true })
          return Effect.sync(() => {
            if (pending.cancelling !== undefined) pending.cancelling = undefined
          })
        })
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
