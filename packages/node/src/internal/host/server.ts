/**
 * The host side of the remote protocol (`wire/remoteProtocol.ts`): serves the requests of remote threads with the host
 * registry of this thread (a request of the operation table in the step that reads it, any other operation in a
 * fiber of its own), and interrupts exactly the call a remote stopped waiting for.
 *
 * Acquired in two steps around the registry, so that on shutdown the registry closes its workers first (calls in
 * flight end as they do for local callers, and are answered), then the call fibers left are interrupted, and only
 * then is `Gone` announced and every channel closed.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import { DeliveryUnknown, HostUnavailable, type McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
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
import type * as Scope from "effect/Scope"
import type { BroadcastChannel } from "node:worker_threads"
import type { HostRegistry } from "./layer.js"
import * as HostRequest from "./request.js"
import type { RemoteRoutes } from "./registry.js"
import * as Protocol from "../wire/remoteProtocol.js"
import * as ReplyChannels from "../wire/replyChannels.js"
import { delivered, type Entry } from "./entry.js"

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
}

/** What this host knows of one remote thread: when it last heard from it, and how many of its calls it serves. */
interface RemotePeer {
  lastHeard: number
  calls: number
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

/** Remote reply channels kept open, most recent first out last; an evicted remote just gets a new instance. */
const maxReplyChannels = 64

const watchEveryMs = 500

const workerIdOf = (operation: Protocol.Operation): string | undefined =>
  operation._tag === "RemoteOpen" ? undefined : operation.workerId

/**
 * What is left of a remote caller's budget when the host starts the call (C9: the hop counts), as the call's
 * timeout. A deadline already passed leaves 0, which times out at once; the longest is what a timer holds.
 */
const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

/**
 * How the owner thread may answer a remote's call itself: only a remote that reads `Result`s, and never a call with
 * progress (progress travels through here, and the success must not overtake it, C29).
 */
const directOf = (
  server: ServerState,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
): HostRequest.DirectCaller | undefined =>
  operation.direct === true && operation.progress !== true
    ? {
        replyTo: { channel: message.from, callId: message.callId },
        onRoute: (route) => {
          const { workerId } = operation
          reply(server, message.from, { _tag: "Route", workerId, channel: route.channel, timeoutMs: route.timeoutMs })
          if (route.evicted !== undefined) reply(server, route.evicted, { _tag: "Unrouted", workerId })
        }
      }
    : undefined

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
            maxOldGenerationSizeMb: operation.maxOldGenerationSizeMb
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

/** One host server's state, passed to the module-level functions below. */
interface ServerState {
  readonly hostId: string
  /** Hosts order themselves by start time: only the newest one in the process serves remote requests. */
  readonly startedAt: number
  /** Newer hosts that announced themselves: while one runs, this host stands by. */
  readonly newer: Set<string>
  readonly calls: Map<string, ServedCall>
  readonly remotes: Map<string, RemotePeer>
  /** Remote reply channels kept open. */
  readonly replyChannels: ReplyChannels.ReplyChannels
  readonly announce: BroadcastChannel
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  /** Runs the watcher of silent remotes, once at a time. */
  readonly runWatcher: (effect: Effect.Effect<void>, options: { readonly onlyIfMissing: boolean }) => unknown
  registry: HostRegistry | undefined
  closing: boolean
  released: boolean
}

const serving = (server: ServerState) => server.registry !== undefined && server.newer.size === 0

const reply = (server: ServerState, to: string, message: Protocol.Reply) => {
  if (server.released) return
  const channel = server.replyChannels.get(to)
  // Only the errors have an encoded form that differs from their type (the error class); the rest is posted as is.
  channel.postMessage(
    message._tag === "RemoteFailure" || message._tag === "WorkerEnded" ? Protocol.encodeReply(message) : message
  )
}

const finish = (server: ServerState, call: ServedCall, exit: Exit.Exit<unknown, McpWorkerError>): void => {
  if (!server.calls.delete(call.key)) return
  // The count of the remote this call was made by: the same thread may be tracked anew since it was abandoned.
  if (--call.remote.calls === 0 && server.remotes.get(call.from) === call.remote) server.remotes.delete(call.from)
  const { callId } = call
  if (Exit.isSuccess(exit)) {
    // The owner thread posted the success to the remote itself.
    if (exit.value !== delivered) reply(server, call.from, { _tag: "RemoteSuccess", callId, value: exit.value })
    return
  }
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
const watch = (server: ServerState): Effect.Effect<void> =>
  Effect.gen(function* () {
    while (server.remotes.size > 0) {
      yield* Effect.sleep(watchEveryMs)
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
    }
  })

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
    interrupt: undefined
  }
  server.calls.set(key, call)
  remote.calls++
  server.runWatcher(watch(server), { onlyIfMissing: true })
  return call
}

// A request that another operation ended (a `cancel`, a `close`) is answered after that operation's own answer, as it
// was from a fiber of its own: a Promise caller has its `cancel` resolved before the request it cancelled rejects.
const ended = (server: ServerState, call: ServedCall) => (exit: Exit.Exit<unknown, McpWorkerError>) =>
  Exit.isSuccess(exit) ? finish(server, call, exit) : queueMicrotask(() => finish(server, call, exit))

/**
 * The host server's part in the requests remote callers send owner threads directly: such a request, once its owner
 * took it, is tracked and answered as a relayed one (its success excepted, which the owner posted itself); a worker's
 * end is announced to the remotes given its route, after those answers (they share the remote's reply channel).
 */
const routes = (server: ServerState): RemoteRoutes => ({
  adopt: (entry: Entry, started) => {
    const operation: typeof Protocol.RemoteCall.Type = {
      _tag: "RemoteCall",
      workerId: entry.workerId,
      method: started.method,
      params: "",
      deadline: started.deadline
    }
    const call = track(server, started.replyTo.channel, started.replyTo.callId, operation)
    if (call === undefined) return
    const sent = HostRequest.adopt(entry, started, ended(server, call))
    if (server.calls.has(call.key)) call.sent = sent
  },
  ended: (workerId, remotes, error) => {
    for (const to of remotes) reply(server, to, { _tag: "WorkerEnded", workerId, error })
  }
})

const dispatch = (server: ServerState, active: HostRegistry, message: typeof Protocol.RemoteRequest.Type) => {
  const call = track(server, message.from, message.callId, message.operation)
  if (call === undefined) return
  const { key } = call
  const operation = message.operation
  if (operation._tag === "RemoteCall") return runRequest(server, active, call, message, operation)
  // Runs synchronously up to the first wait, so an operation that fails at once (unknown id) is answered before this
  // returns.
  const fiber = server.runFork(
    run(active, operation).pipe(Effect.onExit((exit) => Effect.sync(() => finish(server, call, exit))))
  )
  if (server.calls.has(key)) call.fiber = fiber
}

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
  // Checked in the calling thread; read here only to be sure the owner gets an object's JSON text.
  const params = JsonValue.decode(operation.params, { where: "arguments", root: "params" })
  if (Either.isLeft(params)) return finish(server, call, Exit.fail(params.left))
  if (!JsonValue.isJsonObject(params.right)) {
    return finish(
      server,
      call,
      Exit.fail(Protocol.invalidArguments("params", "the request params must be a plain object"))
    )
  }
  const onProgress =
    operation.progress === true
      ? (progress: OwnerProtocol.Progress) =>
          reply(server, message.from, { _tag: "RemoteProgress", callId: message.callId, progress })
      : undefined
  try {
    const sent = active.begin(
      operation.workerId,
      operation.method,
      operation.params,
      remaining(operation.deadline),
      onProgress,
      operation.saveTo,
      directOf(server, message, operation),
      ended(server, call)
    )
    if (server.calls.has(call.key)) call.sent = sent
  } catch (error) {
    finish(server, call, Exit.die(error))
  }
}

const onRequest = (server: ServerState, message: typeof Protocol.RemoteRequest.Type) => {
  const active = server.registry
  if (active === undefined || !serving(server)) return
  if (message.ackBy !== undefined) {
    // Too late to acknowledge: the remote has already been told that its request was not sent (C22a).
    if (Date.now() > message.ackBy) {
      return reply(server, message.from, {
        _tag: "RemoteFailure",
        callId: message.callId,
        error: Protocol.arrivedLate()
      })
    }
    reply(server, message.from, { _tag: "Ack", hostId: server.hostId, callId: message.callId })
  }
  if (server.closing) {
    return reply(server, message.from, {
      _tag: "RemoteFailure",
      callId: message.callId,
      error: Protocol.afterHostClosed(message.operation)
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
  const replyChannels = ReplyChannels.make(maxReplyChannels)
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      server.released = true
      replyChannels.close()
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
    replyChannels,
    announce,
    // Released before the channels: call fibers still running when the host closes are interrupted and answered.
    runFork: yield* FiberSet.makeRuntime<never>(),
    runWatcher: yield* FiberHandle.makeRuntime<never, never, void>(),
    registry: undefined,
    closing: false,
    released: false
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
