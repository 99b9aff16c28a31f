/**
 * The host end of the thread plane: serves the requests of remote threads with the host registry of this thread (a
 * request of the operation table in the step that reads it, without a fiber; any other operation in a fiber of its
 * own), answers each call once on its remote's reply channel, and interrupts exactly the call a remote stopped
 * waiting for, or every call of a remote that fell silent.
 *
 * Acquired in two steps around the registry, so that on shutdown the registry closes its workers first (calls in
 * flight end as they do for local callers, and are answered), then the call fibers left are interrupted, and only
 * then is `Gone` announced and every channel closed.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import {
  DeliveryUnknown,
  HostUnavailable,
  type McpWorkerError,
  type RequestError
} from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberHandle from "effect/FiberHandle"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { BroadcastChannel } from "node:worker_threads"
import type { HostRegistry } from "../host/layer.js"
import type { RemoteRoutes } from "../host/registry.js"
import type * as HostRequest from "../host/request.js"
import * as Protocol from "./protocol.js"
import { currentTracing, endSpan, startSpan, type Tracing, withParent } from "../shared/traced.js"
/**
 * How a call's fiber came to be interrupted: `silent` (the remote's fiber was interrupted and waits for
 * nothing), `reply` (the remote waits for `DeliveryUnknown{reason: "interrupted"}`), `abandoned` (the remote
 * thread fell silent: it is gone, or its event loop is blocked, and then it gets the same answer as `reply`), or
 * not at all by a remote (the host is closing).
 */
type InterruptMode = "silent" | "reply" | "abandoned"

/** A call of a remote thread, as this host serves it. */
interface ServedCall {
  readonly key: string
  readonly from: string
  readonly remote: RemotePeer
  readonly callId: number
  readonly operation: Protocol.Operation
  /** The fiber running an operation other than a request. */
  fiber: Fiber.RuntimeFiber<unknown, McpWorkerError> | undefined
  /** A request, run without a fiber: sent to its owner, not yet answered. */
  sent: HostRequest.Sent | undefined
  interrupt: InterruptMode | undefined
  /** This host's span of a request whose remote caller was tracing, while it runs. */
  span: Tracer.Span | undefined
}

/**
 * What this host knows of one remote thread: when it last heard from it, and how many of its calls it serves.
 */
interface RemotePeer {
  lastHeard: number
  calls: number
}

const watchEveryMs = 500

const workerIdOf = (operation: Protocol.Operation): string | undefined =>
  operation._tag === "RemoteOpen" ? undefined : operation.workerId

/**
 * What is left of a remote caller's budget when the host starts the call (C9: the hop counts), as the call's
 * timeout. A deadline already passed leaves 0, which times out at once; the longest is what a timer holds.
 */
const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

/** What a call interrupted on behalf of its remote answers: the request may have reached the server. */
const interruptedError = (call: ServedCall): McpWorkerError => {
  const workerId = workerIdOf(call.operation)
  return workerId === undefined
    ? new HostUnavailable({
        message:
          "the mcp-worker host heard nothing from this thread for too long and stopped the open; nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId,
        // Only a request has an id; any other operation names none.
        requestId: call.sent?.requestId ?? "",
        reason: "interrupted",
        delivery: "unknown"
      })
}

/** One host server's state, passed to the module-level functions of this module. */
interface ServerState {
  readonly hostId: string
  /** Hosts order themselves by start time: only the newest one in the process serves remote requests. */
  readonly startedAt: number
  /** Newer hosts that announced themselves: while one runs, this host stands by. */
  readonly newer: Set<string>
  readonly calls: Map<string, ServedCall>
  readonly remotes: Map<string, RemotePeer>
  /** The ports of the remotes that take their replies on one (`ReplyPort`), the latest ones. */
  readonly replyPorts: ReplyPorts
  readonly announce: BroadcastChannel
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  /** Runs the watcher of silent remotes, once at a time. */
  readonly runWatcher: (effect: Effect.Effect<void>, options: { readonly onlyIfMissing: boolean }) => unknown
  registry: HostRegistry | undefined
  closing: boolean
  released: boolean
  /** What opens this host's spans of remote requests, when the host is tracing. */
  readonly tracing: Tracing | undefined
}

/** Whether this host serves remote requests: it runs, and no newer host in the process does. */
const serving = (server: ServerState) => server.registry !== undefined && server.newer.size === 0

/** Remotes whose reply ports a host keeps (one per thread that called lately). */
const maxReplyPorts = 256

type ReplyPorts = ReturnType<typeof makeReplyPorts>

const makeReplyPorts = () => Protocol.bounded(maxReplyPorts, Protocol.openReplyPort)

/**
 * Posts to a remote, until the host's channels are released: on its reply port when it takes replies on one, else
 * on its reply channel. A fresh channel instance per message, closed at once: an instance kept open would receive
 * every answer the worker's owner thread posts on that channel too.
 */
const reply = (server: ServerState, to: string, message: Protocol.Reply) => {
  if (server.released) return
  // Only the errors have an encoded form that differs from their type (the error class); the rest is posted as is.
  const encoded =
    message._tag === "RemoteFailure" || message._tag === "WorkerEnded" ? Protocol.encodeReply(message) : message
  const port = server.replyPorts.peek(to)
  if (port !== undefined) return port.postMessage(encoded)
  const channel = new BroadcastChannel(to)
  channel.postMessage(encoded)
  channel.close()
}

/** Answers a call once, with how it ended, and forgets it. */
const finish = (server: ServerState, call: ServedCall, exit: Exit.Exit<unknown, McpWorkerError>): void => {
  if (!server.calls.delete(call.key)) return
  if (call.span !== undefined) endSpan(server.tracing!, call.span, exit)
  // The count of the remote this call was made by: the same thread may be tracked anew since it was abandoned.
  if (--call.remote.calls === 0 && server.remotes.get(call.from) === call.remote) server.remotes.delete(call.from)
  const { callId } = call
  if (Exit.isSuccess(exit)) return reply(server, call.from, { _tag: "RemoteSuccess", callId, value: exit.value })
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return reply(server, call.from, { _tag: "RemoteFailure", callId, error: failure.value })
  if (!Cause.isInterruptedOnly(exit.cause)) {
    reply(server, call.from, { _tag: "Defect", callId, message: "the mcp-worker host failed while running the call" })
    server.runFork(Effect.logError("a remote call failed with a defect", exit.cause))
    return
  }
  if (call.interrupt === "silent") return
  // An abandoned call is answered too: a terminated thread never reads it, a merely blocked one would otherwise
  // wait for ever (it has no timer of its own without a budget, and its pings are still acknowledged).
  reply(server, call.from, {
    _tag: "RemoteFailure",
    callId,
    error: call.interrupt === undefined ? Protocol.afterHostClosed(call.operation) : interruptedError(call)
  })
}

/** Stops a call on behalf of its remote (`mode`): its request, if still in flight, is cancelled at the server. */
const interrupt = (server: ServerState, call: ServedCall, mode: InterruptMode) => {
  if (call.interrupt !== undefined) return
  const sent = call.sent
  if (sent !== undefined) {
    call.interrupt = mode
    // Still in flight: the owner cancels exactly it. Otherwise its answer has already been given.
    if (sent.end("interrupted")) finish(server, call, Exit.interrupt(FiberId.none))
    return
  }
  if (call.fiber === undefined) return
  call.interrupt = mode
  const fiber = call.fiber
  server.runFork(Fiber.interrupt(fiber))
}

// A remote with calls in flight posts something at least every `pingEveryMs`; silence for `remoteGoneAfterMs`
// means its thread was terminated (or is blocked for that long): its calls are interrupted, which cancels their
// requests.
const sweep = (server: ServerState): Effect.Effect<ServerState> =>
  Effect.gen(function* () {
    const now = Date.now()
    for (const [from, remote] of server.remotes) {
      if (now - remote.lastHeard < Protocol.remoteGoneAfterMs) continue
      server.remotes.delete(from)
      const abandoned = Array.from(server.calls.values()).filter((call) => call.remote === remote)
      for (const call of abandoned) interrupt(server, call, "abandoned")
      yield* Effect.logDebug("a remote thread went silent; its calls were interrupted").pipe(
        Effect.annotateLogs({ calls: abandoned.length })
      )
    }
    return server
  })

// A sweep every `watchEveryMs` while any remote is tracked, asked before each wait: the watcher ends with the last
// remote it tracks, and the next tracked call starts it again.
const watchEvery = Schedule.spaced(watchEveryMs).pipe(
  Schedule.whileInput((server: ServerState) => server.remotes.size > 0)
)

// Suspended: `track` builds this on every call, and it runs only when no watcher does. Built eagerly, the schedule's
// driver cost about 180 ns per call, against 37 ns for the loop it replaced (18 ns suspended).
const watch = (server: ServerState): Effect.Effect<void> =>
  Effect.suspend(() => Effect.asVoid(Effect.scheduleFrom(sweep(server), server, watchEvery)))

/** A call of a remote, tracked from now on: answered once, and interrupted should the remote fall silent. */
const track = (
  server: ServerState,
  from: string,
  callId: number,
  operation: Protocol.Operation
): ServedCall | undefined => {
  const key = `${from}#${callId}`
  if (server.calls.has(key)) return undefined
  let remote = server.remotes.get(from)
  if (remote === undefined) {
    remote = { lastHeard: Date.now(), calls: 0 }
    server.remotes.set(from, remote)
  }
  const call: ServedCall = {
    key,
    from,
    remote,
    callId,
    operation,
    fiber: undefined,
    sent: undefined,
    interrupt: undefined,
    span: undefined
  }
  server.calls.set(key, call)
  remote.calls++
  server.runWatcher(watch(server), { onlyIfMissing: true })
  return call
}

/**
 * What answers a request when it ends. One that another operation ended (a `cancel`, a `close`) is answered after that
 * operation's own answer, as it was from a fiber of its own: a Promise caller has its `cancel` resolved before the
 * request it cancelled rejects.
 */
const ended = (server: ServerState, call: ServedCall) => (exit: Exit.Exit<unknown, McpWorkerError>) =>
  Exit.isSuccess(exit) ? finish(server, call, exit) : queueMicrotask(() => finish(server, call, exit))
/**
 * The remote that may be given the worker's route with this request: only one that reads the owner's own answers, and
 * never for a call with progress (progress travels through the host, C29).
 */
const remoteOf = (
  server: ServerState,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
): HostRequest.RemoteCaller | undefined =>
  operation.direct === true && operation.progress !== true
    ? {
        channel: message.from,
        onRoute: (route) => {
          const { workerId } = operation
          const { channel, timeoutMs } = route
          // C83: a host that traces keeps the untraced calls it would root on its own path.
          const traced = server.tracing === undefined ? {} : { traced: true }
          reply(server, message.from, { _tag: "Route", workerId, channel, timeoutMs, ...traced })
          if (route.evicted !== undefined) reply(server, route.evicted, { _tag: "Unrouted", workerId })
        }
      }
    : undefined

/**
 * This host's span of a remote caller's request when the host traces, the child of the caller's (`trace`) or, for an
 * untraced caller, a root of the host's trace; the trace the owner is given (C83). Else the caller's, as it came.
 */
const traceCall = (
  server: ServerState,
  call: ServedCall,
  trace: OwnerProtocol.TraceContext | undefined,
  operation: typeof Protocol.RemoteCall.Type
): OwnerProtocol.TraceContext | undefined => {
  if (server.tracing === undefined) return trace
  call.span = startSpan(server.tracing, "HostServer.request", trace, {
    workerId: operation.workerId,
    method: operation.method,
    direct: false
  })
  return OwnerProtocol.traceContextOf(call.span)
}

/**
 * The host server's part in the requests remote callers send owner threads directly: a worker's end is announced to
 * the remotes given its route.
 */
const routes = (server: ServerState): RemoteRoutes => ({
  answer: (replyTo, error) => reply(server, replyTo.channel, { _tag: "RemoteFailure", callId: replyTo.callId, error }),
  ended: (workerId, remotes, error) => {
    for (const to of remotes) reply(server, to, { _tag: "WorkerEnded", workerId, error })
  }
})

/**
 * Runs a remote thread's request in this very step, without a fiber: the host's own work on every remote call is a
 * check of the params, the registry's busy check and one post to the owner. The request's own completion answers
 * it; when the host closes, the registry's close of each worker ends the request in flight, which answers it too.
 */
const runRequest = (
  server: ServerState,
  active: HostRegistry,
  call: ServedCall,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
) => {
  const trace = traceCall(server, call, message.trace, operation)
  // Checked in the calling thread; read here only to be sure the owner gets an object's JSON text.
  const params = JsonValue.decode(operation.params, { where: "arguments", root: "params" })
  const invalid = Either.isLeft(params)
    ? params.left
    : JsonValue.isJsonObject(params.right)
      ? undefined
      : Protocol.invalidArguments("params", "the request params must be a plain object")
  if (invalid !== undefined) {
    const counted = active.refusedBefore(operation.workerId, operation.method, "thread", invalid)
    return finish(server, call, Exit.fail(counted))
  }
  const onProgress =
    operation.progress === true
      ? (progress: OwnerProtocol.Progress) =>
          reply(server, message.from, { _tag: "RemoteProgress", callId: message.callId, progress })
      : undefined
  try {
    const sent = active.begin(
      {
        id: operation.workerId,
        method: operation.method,
        params: operation.params,
        budgetMs: remaining(operation.deadline),
        idleMs: operation.idleMs,
        onProgress,
        saveTo: operation.saveTo,
        spill: operation.spill,
        remote: remoteOf(server, message, operation),
        trace,
        surface: "thread"
      },
      ended(server, call)
    )
    if (server.calls.has(call.key)) call.sent = sent
  } catch (error) {
    finish(server, call, Exit.die(error))
  }
}
/**
 * The host server of one host layer.
 *
 * @internal
 */
export interface HostServer {
  /** Starts serving remote requests with `registry`; from the scope's close on, new requests are refused. */
  readonly serve: (registry: HostRegistry) => Effect.Effect<void, never, Scope.Scope>
}

/** Runs an operation other than a request (those are `runRequest`'s), in a fiber of its own. */
const run = (
  registry: HostRegistry,
  operation: Exclude<Protocol.Operation, typeof Protocol.RemoteCall.Type>
): Effect.Effect<unknown, McpWorkerError> => {
  switch (operation._tag) {
    case "RemoteOpen":
      return Either.match(ServerConfig.fromWire(operation.config), {
        onLeft: Effect.fail,
        onRight: (config) =>
          registry.openConfig(config, {
            timeout: remaining(operation.deadline),
            isolation: operation.isolation,
            maxOldGenerationSizeMb: operation.maxOldGenerationSizeMb,
            onTooLarge: operation.spill === undefined ? undefined : { spill: operation.spill },
            tools: operation.tools,
            name: operation.name
          })
      })
    case "RemoteStatus":
      return registry.service.status(operation.workerId)
    case "RemoteCancel":
      return registry.service.cancel(operation.workerId, operation.requestId)
    case "RemoteClose":
      return registry.service.close(operation.workerId, { timeout: remaining(operation.deadline) })
    case "RemoteEvents":
      return registry.pullEvents(operation.workerId, operation.subscription, operation.capacity, operation.end === true)
  }
}

const dispatch = (server: ServerState, active: HostRegistry, message: typeof Protocol.RemoteRequest.Type) => {
  const call = track(server, message.from, message.callId, message.operation)
  if (call === undefined) return
  const { key } = call
  const operation = message.operation
  if (operation._tag === "RemoteCall") return runRequest(server, active, call, message, operation)
  // Runs synchronously up to the first wait, so an operation that fails at once (unknown id) is answered before this
  // returns.
  const fiber = server.runFork(
    withParent(run(active, operation), message.trace).pipe(
      Effect.onExit((exit) => Effect.sync(() => finish(server, call, exit))),
      // Its failure is the remote's answer, given by `finish`: not an unhandled error of this fiber.
      Effect.exit
    )
  )
  if (server.calls.has(key)) call.fiber = fiber
}

// C117: a request of the table the host refuses before the registry is asked is counted here, once.
const countedRefusal = <E extends McpWorkerError>(
  active: HostRegistry,
  operation: (typeof Protocol.RemoteRequest.Type)["operation"],
  error: E
): E =>
  operation._tag === "RemoteCall"
    ? (active.refusedBefore(operation.workerId, operation.method, "thread", error as RequestError) as E)
    : error

const onRequest = (server: ServerState, message: typeof Protocol.RemoteRequest.Type) => {
  const active = server.registry
  if (active === undefined || !serving(server)) return
  server.replyPorts.get(message.from, message.thread)
  if (message.ackBy !== undefined) {
    // Too late to acknowledge: the remote has already been told that its request was not sent (C22a).
    if (Date.now() > message.ackBy) {
      return reply(server, message.from, {
        _tag: "RemoteFailure",
        callId: message.callId,
        error: countedRefusal(active, message.operation, Protocol.arrivedLate())
      })
    }
    reply(server, message.from, { _tag: "Ack", hostId: server.hostId, callId: message.callId })
  }
  if (server.closing) {
    return reply(server, message.from, {
      _tag: "RemoteFailure",
      callId: message.callId,
      error: countedRefusal(active, message.operation, Protocol.afterHostClosed(message.operation))
    })
  }
  dispatch(server, active, message)
}

const onRemoteMessage = (server: ServerState, data: unknown) => {
  const decoded = Protocol.decodeRemoteMessage(data)
  if (Either.isLeft(decoded)) {
    // Only a remote of another version of this library would send what cannot be read: say so, if it can hear.
    const raw = data as { from?: unknown; callId?: unknown } | null
    if (serving(server) && typeof raw?.from === "string" && typeof raw.callId === "number") {
      reply(server, raw.from, {
        _tag: "Defect",
        callId: raw.callId,
        message: "the mcp-worker host could not read the request (another version of mcp-worker?)"
      })
    }
    return
  }
  const message = decoded.right
  const remote = server.remotes.get(message.from)
  if (remote !== undefined) remote.lastHeard = Date.now()
  switch (message._tag) {
    case "RemoteRequest":
      return onRequest(server, message)
    case "Interrupt": {
      const call = server.calls.get(`${message.from}#${message.callId}`)
      if (call !== undefined) interrupt(server, call, message.reply ? "reply" : "silent")
      return
    }
    case "Ping":
      if (serving(server)) reply(server, message.from, { _tag: "Ack", hostId: server.hostId })
      return
  }
}

const onAnnouncement = (server: ServerState, data: unknown) => {
  const decoded = Protocol.decodeAnnouncement(data)
  if (Either.isLeft(decoded) || decoded.right.hostId === server.hostId) return
  const announcement = decoded.right
  if (announcement._tag === "Up") {
    const theirs = announcement.startedAt
    if (theirs > server.startedAt || (theirs === server.startedAt && announcement.hostId > server.hostId)) {
      server.newer.add(announcement.hostId)
    }
    return
  }
  if (server.newer.delete(announcement.hostId) && server.newer.size === 0 && server.registry !== undefined) {
    // Serving again: remotes that saw the newer host go learn that a host is here.
    if (!server.closing) server.announce.postMessage({ _tag: "Up", hostId: server.hostId, startedAt: server.startedAt })
  }
}

/**
 * Opens the host's channels in the current scope. Requests are served once `serve` is called.
 *
 * @internal
 */
export const make: Effect.Effect<HostServer, never, Scope.Scope> = Effect.gen(function* () {
  const hostId = Protocol.randomId()
  // Acquired first, released last: `Gone` goes out after every call was answered.
  const announce = yield* Effect.acquireRelease(
    Effect.sync(() => Protocol.unrefChannel(Protocol.announceChannel)),
    (channel) =>
      Effect.sync(() => {
        if (server.registry !== undefined) channel.postMessage({ _tag: "Gone", hostId })
        channel.close()
      })
  )
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      server.released = true
      server.replyPorts.close()
    })
  )
  const requests = yield* Effect.acquireRelease(
    Effect.sync(() => Protocol.unrefChannel(Protocol.hostChannel)),
    (channel) => Effect.sync(() => channel.close())
  )
  const server: ServerState = {
    hostId,
    // One host per process is the supported setup; the ordering only keeps two hosts from answering one request.
    startedAt: performance.timeOrigin + performance.now(),
    newer: new Set(),
    calls: new Map(),
    remotes: new Map(),
    replyPorts: makeReplyPorts(),
    announce,
    // Released before the channels: call fibers still running when the host closes are interrupted and answered.
    runFork: yield* FiberSet.makeRuntime<never>(),
    runWatcher: yield* FiberHandle.makeRuntime<never, never, void>(),
    registry: undefined,
    closing: false,
    released: false,
    tracing: yield* currentTracing
  }
  requests.onmessage = (event) => onRemoteMessage(server, event.data)
  announce.onmessage = (event) => onAnnouncement(server, event.data)

  const serve: HostServer["serve"] = (active) =>
    Effect.gen(function* () {
      server.registry = active
      active.routeRemotes(routes(server))
      announce.postMessage({ _tag: "Up", hostId, startedAt: server.startedAt })
      // Runs before the registry closes its workers: from then on, new requests are refused at once.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          server.closing = true
        })
      )
    })
  return { serve }
})
