/**
 * The remote side of `McpWorkers`: any thread of the process reaches the host registry (`NodeMcpWorkers.layer()`,
 * built in some other thread or in this one) by worker id, over the protocol in `remoteProtocol.ts`.
 *
 * Cost of a call: one message to the host, one back. Nothing else runs on the hot path: the remote asks the host
 * to acknowledge a request only when it has not heard from a host lately, and only then arms the no-answer timer
 * that turns a missing host into `HostUnavailable` (C22). While calls are in flight it pings the host whenever it
 * has posted nothing for `pingEveryMs`, which tells the host that this thread is still waiting, and checks that the
 * host still acknowledges. A request with a budget also carries its deadline, and is given up here, without the
 * host, shortly after it (C9).
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import {
  DeliveryUnknown,
  HostUnavailable,
  type InvalidInput,
  type McpWorkerError,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { types } from "node:util"
import { BroadcastChannel } from "node:worker_threads"
import * as Budget from "./budget.js"
import * as Protocol from "./remoteProtocol.js"
import { traced } from "./traced.js"

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
export interface RemoteService extends McpWorkers.McpWorkersService {
  readonly listTools: (
    id: string,
    options?: RemoteRequestOptions & { readonly cursor?: string | undefined }
  ) => Effect.Effect<McpWorkers.ListToolsResult, RequestError>
  readonly callTool: (
    id: string,
    name: string,
    args?: JsonValue.JsonObject,
    options?: RemoteRequestOptions
  ) => Effect.Effect<McpWorkers.CallToolResult, RequestError>
}

interface Pending {
  readonly operation: Protocol.Operation
  /** When this thread stops waiting without the host: the request's deadline plus `graceMs`, if it has one. */
  readonly giveUpAt: number | undefined
  /** The time by which a host must acknowledge the request, when one was asked to; a host refuses it later. */
  readonly ackBy: number | undefined
  acked: boolean
  readonly resume: (exit: Exit.Exit<unknown, McpWorkerError>) => void
}

const isProxy = (u: unknown) => types.isProxy(u)

// Remote spans say so; like the host's, they are only opened when a real tracer is installed.
const span = (name: string, attributes: Record<string, unknown>) => traced(name, { ...attributes, remote: true })

/** A request no host acknowledged by its `ackBy`: proven never sent, since a host reading it later refuses it. */
const noHost = () =>
  new HostUnavailable({
    message:
      `no mcp-worker host acknowledged the request within ${Protocol.ackWithinMs} ms, so it was not sent (and a ` +
      "host that reads it later refuses it): build NodeMcpWorkers.layer() in some thread of this process (normally " +
      "the main thread) before using NodeMcpWorkers.layerRemote or makePromiseClient; if one runs, its event loop " +
      "was blocked"
  })

/** A request the host may have sent before it fell silent. */
const hostUnresponsive = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "Open"
    ? new HostUnavailable({
        message:
          "the mcp-worker host stopped answering while it opened the worker; if it comes back, the open is " +
          "interrupted and nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId: operation.workerId,
        requestId: "",
        reason: "host_unresponsive",
        delivery: "unknown"
      })

/**
 * A caller's budget in milliseconds, or `undefined` for the default one, refused exactly as the host refuses it
 * (`InvalidInput` at `options.timeout`), and clamped to the longest timer.
 */
const budgetOf = (input: unknown, where: "config" | "arguments"): Either.Either<number | undefined, InvalidInput> =>
  Either.mapLeft(Budget.budgetOf(input as Duration.DurationInput | undefined), (message) =>
    Budget.invalidTimeout(where, message)
  )

/** The deadline of a budget that started at `started` (`Date.now()`: one clock for all threads of the process). */
const deadlineOf = (budget: number | undefined, started: number): number | undefined =>
  budget === undefined ? undefined : started + budget

/**
 * Builds a remote client in the current scope. Its channels never keep the thread alive while no call is in
 * flight, and are closed with the scope.
 *
 * @internal
 */
export const make: Effect.Effect<RemoteService, never, Scope.Scope> = Effect.gen(function* () {
  const from = Protocol.replyChannel(Protocol.randomId())
  const pending = new Map<number, Pending>()
  let nextCallId = 0
  let lastHeard = Number.NEGATIVE_INFINITY
  let lastSent = Number.NEGATIVE_INFINITY
  let probeSentAt: number | undefined
  let probeWithinMs: number = Protocol.ackWithinMs
  let knownHost: string | undefined
  let hostGone = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let timerAt = Number.POSITIVE_INFINITY

  // A fresh instance per message, closed at once: a remote holding a `host` instance would receive every other
  // remote's requests too (a BroadcastChannel delivers to all instances of its name but the sender).
  const post = (message: Protocol.RemoteMessageEncoded) => {
    const channel = new BroadcastChannel(Protocol.hostChannel)
    channel.postMessage(message)
    channel.close()
    lastSent = Date.now()
  }

  const replies = yield* Effect.acquireRelease(
    Effect.sync(() => Protocol.unrefChannel(from)),
    (channel) =>
      Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        timer = undefined
        const left = Array.from(pending.entries())
        pending.clear()
        for (const [callId, call] of left) {
          post({ _tag: "Interrupt", from, callId, reply: false })
          call.resume(Exit.interrupt(FiberId.none))
        }
        channel.close()
      })
  )

  const settle = (callId: number, exit: Exit.Exit<unknown, McpWorkerError>) => {
    const call = pending.get(callId)
    if (call === undefined) return
    pending.delete(callId)
    if (pending.size === 0) replies.unref()
    call.resume(exit)
  }

  /** Ends every call in flight with `error`, and tells a host that may still be running them to stop. */
  const failAll = (
    error: (operation: Protocol.Operation) => McpWorkerError,
    which: (call: Pending) => boolean = () => true
  ) => {
    for (const [callId, call] of Array.from(pending.entries())) {
      if (!which(call)) continue
      post({ _tag: "Interrupt", from, callId, reply: false })
      settle(callId, Exit.fail(error(call.operation)))
    }
  }

  /**
   * Past its deadline and its grace, with no answer: the host is blocked or lost the call. The request may have
   * reached the server, and the host is told to cancel it. Its request id was never sent here.
   */
  const giveUp = (callId: number, call: Pending) => {
    post({ _tag: "Interrupt", from, callId, reply: false })
    const workerId = call.operation._tag === "Open" ? "" : call.operation.workerId
    settle(callId, Exit.fail(new DeliveryUnknown({ workerId, requestId: "", reason: "timeout", delivery: "unknown" })))
  }

  const heard = () => {
    lastHeard = Date.now()
    probeSentAt = undefined
  }

  /** When the timer must look next: the probe's deadline, the next keep-alive ping, a call's own deadline. */
  const nextCheck = (): number => {
    let at = probeSentAt !== undefined ? probeSentAt + probeWithinMs : Number.POSITIVE_INFINITY
    if (pending.size === 0) return at
    at = Math.min(at, lastSent + Protocol.pingEveryMs)
    for (const call of pending.values()) {
      if (call.giveUpAt !== undefined && call.giveUpAt < at) at = call.giveUpAt
      if (call.ackBy !== undefined && !call.acked && call.ackBy < at) at = call.ackBy
    }
    return at
  }

  // One timer at most, re-armed only when an earlier check is needed: a steady stream of calls arms it about
  // once per `pingEveryMs`, not once per call.
  const arm = () => {
    const at = nextCheck()
    if (at === Number.POSITIVE_INFINITY || (timer !== undefined && timerAt <= at)) return
    if (timer !== undefined) clearTimeout(timer)
    timerAt = at
    // A timer holds at most 2^31 - 1 ms (longer ones fire at once); a later check re-arms it.
    timer = setTimeout(onTimer, Math.min(Math.max(0, at - Date.now()) + 1, ServerConfig.maxTimeoutMs))
    timer.unref()
  }

  // After this thread's event loop was blocked, timers run before the messages that arrived meanwhile are read:
  // the check waits for them (`setImmediate` runs after that turn's I/O), so that an answer or an `Ack` already
  // here is not taken for silence.
  const onTimer = () => {
    timer = undefined
    timerAt = Number.POSITIVE_INFINITY
    setImmediate(check)
  }

  const check = () => {
    const now = Date.now()
    for (const [callId, call] of Array.from(pending.entries())) {
      // No `Ack` by `ackBy`, and every message that arrived meanwhile has been read (see `onTimer`): no host took it.
      if (call.ackBy !== undefined && !call.acked && now > call.ackBy) settle(callId, Exit.fail(noHost()))
      else if (call.giveUpAt !== undefined && now >= call.giveUpAt) giveUp(callId, call)
    }
    if (probeSentAt !== undefined && now - probeSentAt >= probeWithinMs) {
      probeSentAt = undefined
      // The host fell silent with these calls in flight: each may have been sent before it did. A call still
      // waiting for its own `Ack` is left to its `ackBy`, which proves it either way.
      failAll(hostUnresponsive, (call) => call.ackBy === undefined || call.acked)
    }
    if (pending.size > 0 && now - lastSent >= Protocol.pingEveryMs) {
      post({ _tag: "Ping", from })
      // A probe already out keeps its own deadline: pings must not postpone the verdict on a host that is gone.
      if (probeSentAt === undefined) {
        probeSentAt = now
        probeWithinMs = Protocol.pingAckWithinMs
      }
    }
    arm()
  }

  replies.onmessage = (event) => {
    const decoded = Protocol.decodeReply(event.data)
    if (Either.isLeft(decoded)) return
    heard()
    const reply = decoded.right
    switch (reply._tag) {
      case "Ack": {
        knownHost = reply.hostId
        hostGone = false
        const call = reply.callId === undefined ? undefined : pending.get(reply.callId)
        if (call !== undefined) call.acked = true
        return
      }
      case "Success":
        return settle(reply.callId, Exit.succeed(reply.value))
      case "Failure":
        return settle(reply.callId, Exit.fail(reply.error))
      case "Defect":
        return settle(reply.callId, Exit.die(new Error(reply.message)))
    }
  }

  const announcements = yield* Effect.acquireRelease(
    Effect.sync(() => Protocol.unrefChannel(Protocol.announceChannel)),
    (channel) => Effect.sync(() => channel.close())
  )
  announcements.onmessage = (event) => {
    const decoded = Protocol.decodeAnnouncement(event.data)
    if (Either.isLeft(decoded)) return
    const announcement = decoded.right
    if (announcement._tag === "Up") {
      knownHost = announcement.hostId
      hostGone = false
      heard()
      return
    }
    // Another host's `Gone` (a second host in the process, on standby) says nothing about ours.
    if (knownHost !== undefined && announcement.hostId !== knownHost) return
    knownHost = undefined
    hostGone = true
    // The host answered every call it ran before announcing; those answers travel on the reply channel and are
    // read in this same turn of the event loop, so whatever is still pending after it was never going to be.
    setImmediate(() => {
      if (hostGone) failAll(Protocol.afterHostClosed)
    })
  }

  const send = (operation: Protocol.Operation, signal?: AbortSignal): Effect.Effect<unknown, McpWorkerError> =>
    Effect.async<unknown, McpWorkerError>((resume) => {
      // Aborted between the call and now (this runs a moment after the call when the runtime is still starting):
      // nothing was sent, so nothing is.
      if (signal?.aborted === true) return resume(Exit.interrupt(FiberId.none))
      if (hostGone) return resume(Exit.fail(Protocol.afterHostClosed(operation)))
      const callId = ++nextCallId
      const now = Date.now()
      // Not heard from a host lately: this request asks for an `Ack`, by a time after which a host refuses it.
      const ackBy = now - lastHeard > Protocol.staleAfterMs ? now + Protocol.ackWithinMs : undefined
      if (ackBy !== undefined && probeSentAt === undefined) {
        probeSentAt = now
        probeWithinMs = Protocol.ackWithinMs
      }
      const onAbort = () => {
        if (pending.has(callId)) post({ _tag: "Interrupt", from, callId, reply: true })
      }
      // Only requests have an answer for a caller who stops waiting on its own (`DeliveryUnknown`); an open or a
      // close is bounded by the host, and by the `Ack`s of a host that is gone.
      const deadline = operation._tag === "ListTools" || operation._tag === "CallTool" ? operation.deadline : undefined
      pending.set(callId, {
        operation,
        giveUpAt: deadline === undefined ? undefined : deadline + Protocol.graceMs,
        ackBy,
        acked: false,
        resume: (exit) => {
          signal?.removeEventListener("abort", onAbort)
          resume(exit)
        }
      })
      if (pending.size === 1) replies.ref()
      signal?.addEventListener("abort", onAbort, { once: true })
      post(
        ackBy === undefined
          ? { _tag: "Request", from, callId, operation }
          : { _tag: "Request", from, callId, ackBy, operation }
      )
      arm()
      return Effect.sync(() => {
        signal?.removeEventListener("abort", onAbort)
        if (!pending.delete(callId)) return
        if (pending.size === 0) replies.unref()
        post({ _tag: "Interrupt", from, callId, reply: false })
      })
    })

  // Everything is validated here, in the calling thread, so that only plain data in the protocol's shape is ever
  // posted: the host drops a message it cannot read.
  const checkId = (id: unknown): Either.Either<string, UnknownWorker> =>
    typeof id === "string" ? Either.right(id) : Either.left(new UnknownWorker({ workerId: String(id) }))

  const open: McpWorkers.McpWorkersService["open"] = (input, options) =>
    Effect.suspend(() =>
      Either.all([ServerConfig.normalize(input, process.env, { isProxy }), budgetOf(options?.timeout, "config")]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([config, budget]) =>
            send({
              _tag: "Open",
              config: ServerConfig.toWire(config),
              deadline: deadlineOf(budget, Date.now())
            }) as Effect.Effect<WorkerId, McpWorkerError>
        })
      )
    ).pipe(span("McpWorkers.open", {})) as ReturnType<McpWorkers.McpWorkersService["open"]>

  const listTools: RemoteService["listTools"] = (id, options) =>
    Effect.suspend(() => {
      const cursor = options?.cursor
      if (cursor !== undefined && typeof cursor !== "string") {
        return Effect.fail(Protocol.invalidArguments("cursor", "the cursor must be a string"))
      }
      return Either.all([checkId(id), budgetOf(options?.timeout, "arguments")]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([workerId, budget]) =>
            send({ _tag: "ListTools", workerId, cursor, deadline: deadlineOf(budget, Date.now()) }, options?.signal)
        })
      )
    }).pipe(span("McpWorkers.listTools", { workerId: id })) as Effect.Effect<McpWorkers.ListToolsResult, RequestError>

  const callTool: RemoteService["callTool"] = (id, name, args, options) =>
    Effect.suspend(() => {
      const started = Date.now()
      if (typeof name !== "string" || name.length === 0) {
        return Effect.fail(Protocol.invalidArguments("name", "the tool name must be a non-empty string"))
      }
      if (args !== undefined && !JsonValue.isJsonObject(args)) {
        return Effect.fail(Protocol.invalidArguments("args", "tool arguments must be a plain object"))
      }
      return Either.all([
        checkId(id),
        JsonValue.encode(args ?? {}, { where: "arguments", root: "args", isProxy }),
        budgetOf(options?.timeout, "arguments")
      ]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([workerId, text, budget]) =>
            send(
              { _tag: "CallTool", workerId, name, args: text, deadline: deadlineOf(budget, started) },
              options?.signal
            )
        })
      )
    }).pipe(span("McpWorkers.callTool", { workerId: id, tool: name })) as Effect.Effect<
      McpWorkers.CallToolResult,
      RequestError
    >

  const status: McpWorkers.McpWorkersService["status"] = (id) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => send({ _tag: "Status", workerId })
      })
    ) as Effect.Effect<WorkerStatus, UnknownWorker | HostUnavailable>

  const cancel: McpWorkers.McpWorkersService["cancel"] = (id, requestId) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => send({ _tag: "Cancel", workerId, requestId: String(requestId) })
      })
    ).pipe(Effect.asVoid) as ReturnType<McpWorkers.McpWorkersService["cancel"]>

  const close: McpWorkers.McpWorkersService["close"] = (id, options) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        // Like the host's `close`: an unusable budget falls back to the default one (close reports no InvalidInput).
        onRight: (workerId) =>
          send({
            _tag: "Close",
            workerId,
            deadline: deadlineOf(Either.getOrUndefined(budgetOf(options?.timeout, "config")), Date.now())
          })
      })
    ).pipe(span("McpWorkers.close", { workerId: id })) as ReturnType<McpWorkers.McpWorkersService["close"]>

  const service: RemoteService = { open, listTools, callTool, status, cancel, close }
  return service
})

/**
 * `McpWorkers` in any thread of a process whose host registry runs in some thread.
 *
 * @internal
 */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(McpWorkers.McpWorkers, make)
