/**
 * The host side of the remote protocol (`wire/remoteProtocol.ts`): serves the requests of remote threads with the host
 * registry of this thread (a request of the operation table in the step that reads it, any other operation in a
 * fiber of its own), and interrupts exactly the call a remote stopped waiting for.
 *
 * Acquired in two steps around the registry, so that on shutdown the registry closes its workers first (calls in
 * flight end as they do for local callers, and are answered), then the call fibers left are interrupted, and only
 * then is `Gone` announced and every channel closed.
 *
 * The record and its calls are `serverCalls.ts`; the requests of the operation table, `serverRelay.ts`.
 *
 * @internal
 */
import type { McpWorkerError, RequestError } from "@mcp-worker/core/McpWorkerError"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberHandle from "effect/FiberHandle"
import * as FiberSet from "effect/FiberSet"
import type * as Scope from "effect/Scope"
import type { HostRegistry } from "./layer.js"
import * as Protocol from "../wire/remoteProtocol.js"
import { finish, interrupt, makeReplyPorts, remaining, reply, type ServerState, serving, track } from "./serverCalls.js"
import { routes, runRequest } from "./serverRelay.js"
import { currentTracing, withParent } from "../shared/traced.js"

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
