/**
 * The host end of the thread plane, acquired around the registry so `Gone` goes out after every call was answered.
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
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
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
import type { HostRegistry } from "../host/service.js"
import type { RemoteCaller, RemoteRoutes, Sent } from "../host/registry.js"
import * as Protocol from "./protocol.js"
import { currentTracing, endSpan, startSpan, type Tracing, withParent } from "../shared/traced.js"

// `abandoned` (silent remote) is answered as `reply`: a blocked thread would wait for ever.
type InterruptMode = "silent" | "reply" | "abandoned"

interface ServedCall {
  readonly key: string
  readonly from: string
  readonly remote: RemotePeer
  readonly callId: number
  readonly operation: Protocol.Operation
  fiber: Fiber.RuntimeFiber<unknown, McpWorkerError> | undefined
  sent: Sent | undefined
  interrupt: InterruptMode | undefined
  span: Tracer.Span | undefined
}

interface RemotePeer {
  lastHeard: number
  calls: number
}

const watchEveryMs = 500

const workerIdOf = (operation: Protocol.Operation): string | undefined =>
  operation._tag === "RemoteOpen" ? undefined : operation.workerId

// C9
const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

const interruptedError = (call: ServedCall): McpWorkerError => {
  const workerId = workerIdOf(call.operation)
  return workerId === undefined
    ? new HostUnavailable({
        message:
          "the mcp-worker host heard nothing from this thread for too long and stopped the open; nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId,
        requestId: call.sent?.requestId ?? "",
        reason: "interrupted",
        delivery: "unknown"
      })
}

interface ServerState {
  readonly hostId: string
  readonly startedAt: number
  readonly newer: Set<string>
  readonly calls: Map<string, ServedCall>
  readonly remotes: Map<string, RemotePeer>
  readonly replyPorts: ReplyPorts
  readonly announce: BroadcastChannel
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly runWatcher: (effect: Effect.Effect<void>, options: { readonly onlyIfMissing: boolean }) => unknown
  registry: HostRegistry | undefined
  closing: boolean
  released: boolean
  readonly tracing: Tracing | undefined
}

const serving = (server: ServerState) => server.registry !== undefined && server.newer.size === 0

const maxReplyPorts = 256

type ReplyPorts = ReturnType<typeof makeReplyPorts>

const makeReplyPorts = () => Protocol.bounded(maxReplyPorts, Protocol.openReplyPort)

// A kept channel would receive every answer posted on it too.
const reply = (server: ServerState, to: string, message: Protocol.Reply) => {
  if (server.released) return
  const encoded =
    message._tag === "RemoteFailure" || message._tag === "WorkerEnded" ? Protocol.encodeReply(message) : message
  const port = server.replyPorts.peek(to)
  if (port !== undefined) return port.postMessage(encoded)
  const channel = new BroadcastChannel(to)
  channel.postMessage(encoded)
  channel.close()
}

const finish = (server: ServerState, call: ServedCall, exit: Exit.Exit<unknown, McpWorkerError>): void => {
  if (!server.calls.delete(call.key)) return
  if (call.span !== undefined) endSpan(server.tracing!, call.span, exit)
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
  reply(server, call.from, {
    _tag: "RemoteFailure",
    callId,
    error: call.interrupt === undefined ? Protocol.afterHostClosed(call.operation) : interruptedError(call)
  })
}

const interrupt = (server: ServerState, call: ServedCall, mode: InterruptMode) => {
  if (call.interrupt !== undefined) return
  const sent = call.sent
  if (sent !== undefined) {
    call.interrupt = mode
    // C11
    if (sent.end("interrupted")) finish(server, call, Exit.interrupt(FiberId.none))
    return
  }
  if (call.fiber === undefined) return
  call.interrupt = mode
  const fiber = call.fiber
  server.runFork(Fiber.interrupt(fiber))
}

// C22
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

const watchEvery = Schedule.spaced(watchEveryMs).pipe(
  Schedule.whileInput((server: ServerState) => server.remotes.size > 0)
)

// Suspended: it is built on every call.
const watch = (server: ServerState): Effect.Effect<void> =>
  Effect.suspend(() => Effect.asVoid(Effect.scheduleFrom(sweep(server), server, watchEvery)))

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

// A `cancel` resolves before the request it ended rejects.
const ended = (server: ServerState, call: ServedCall) => (exit: Exit.Exit<unknown, McpWorkerError>) =>
  Exit.isSuccess(exit) ? finish(server, call, exit) : queueMicrotask(() => finish(server, call, exit))
// C29
const remoteOf = (
  server: ServerState,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
): RemoteCaller | undefined =>
  operation.direct === true && operation.progress !== true
    ? {
        channel: message.from,
        onRoute: (route) => {
          const { workerId } = operation
          const { channel, timeoutMs } = route
          // C83: the host roots untraced calls itself.
          const traced = server.tracing === undefined ? {} : { traced: true }
          reply(server, message.from, { _tag: "Route", workerId, channel, timeoutMs, ...traced })
          if (route.evicted !== undefined) reply(server, route.evicted, { _tag: "Unrouted", workerId })
        }
      }
    : undefined

// C83
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

const routes = (server: ServerState): RemoteRoutes => ({
  answer: (replyTo, error) => reply(server, replyTo.channel, { _tag: "RemoteFailure", callId: replyTo.callId, error }),
  ended: (workerId, remotes, error) => {
    for (const to of remotes) reply(server, to, { _tag: "WorkerEnded", workerId, error })
  }
})

// No fiber per request: closing a worker answers its request in flight.
const runRequest = (
  server: ServerState,
  active: HostRegistry,
  call: ServedCall,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
) => {
  const trace = traceCall(server, call, message.trace, operation)
  // So the owner surely gets an object's JSON text.
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
        givesUp: operation.deadline !== undefined,
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
/** @internal */
export interface HostServer {
  readonly serve: (registry: HostRegistry) => Effect.Effect<void, never, Scope.Scope>
}

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
  // An unknown id is answered before this returns.
  const fiber = server.runFork(
    withParent(run(active, operation), message.trace).pipe(
      Effect.onExit((exit) => Effect.sync(() => finish(server, call, exit))),
      Effect.exit
    )
  )
  if (server.calls.has(key)) call.fiber = fiber
}

// C117
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
    // C22a
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
    // Only another version of this library sends what cannot be read.
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
    if (!server.closing) server.announce.postMessage({ _tag: "Up", hostId: server.hostId, startedAt: server.startedAt })
  }
}

/** @internal */
export const make: Effect.Effect<HostServer, never, Scope.Scope> = Effect.gen(function* () {
  const hostId = Protocol.randomId()
  // Released last: `Gone` after every call was answered.
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
    startedAt: performance.timeOrigin + performance.now(),
    newer: new Set(),
    calls: new Map(),
    remotes: new Map(),
    replyPorts: makeReplyPorts(),
    announce,
    // Released before the channels: stray call fibers are answered.
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
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          server.closing = true
        })
      )
    })
  return { serve }
})
