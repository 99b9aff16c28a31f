/**
 * `RpcServer` on a Unix domain socket; a call's request is cancelled exactly when its fiber is interrupted.
 *
 * Without tracing, a plain request is begun and answered in the step that reads its frame, with no server fiber, and
 * its `Interrupt` ends it there: `RpcServer` would interrupt a forked handler and the next request could find the
 * worker busy (C11).
 *
 * @internal
 */
import type * as Headers from "@effect/platform/Headers"
import * as Rpc from "@effect/rpc/Rpc"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SocketServer from "@effect/platform/SocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import {
  HostUnavailable,
  InvalidInput,
  McpWorkerError,
  RequestNotPending,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as SocketCaller from "@mcp-worker/caller/SocketCaller"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Operations from "@mcp-worker/core/Operations"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import type * as ToolFilter from "@mcp-worker/core/ToolFilter"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import type { ListenOptions } from "../../NodeMcpWorkers.js"
import type { Sent } from "../host/registry.js"
import type { HostRegistry } from "../host/service.js"
import { isTracing } from "../shared/traced.js"
import * as Frames from "./frames.js"
import * as Grants from "./grants.js"
import { ListenRpcs, RequestPayload, streamedTag } from "./rpcs.js"
import * as SocketFile from "./socketFile.js"

const defaultIdleMs = 10_000
const defaultMaxConnections = 1_024

interface Listener {
  readonly registry: HostRegistry
  readonly grants: Grants.Grants
  readonly acceptWorkerIds: boolean
  readonly prefix: string
  readonly subscriptions: Map<number, Set<string>>
  readonly calls: Calls
  readonly peers: WeakMap<object, Frames.Peer>
  closing: boolean
}

interface Call {
  readonly clientId: number
  readonly sent: Sent
  /** `undefined`: the server answers its own. */
  readonly answer: ((exit: Exit.Exit<unknown, RequestError>) => void) | undefined
}

type Calls = Map<string, Call>

/** A peer's own value is replaced. */
const callHeader = "x-mcp-worker-call"

const keyOf = (clientId: number, requestId: string) => `${clientId}/${requestId}`

const callOf = (headers: Headers.Headers): string | undefined => headers[callHeader]

const began = (calls: Calls, key: string, sent: Sent): void => {
  calls.set(key, { clientId: Number(key.slice(0, key.indexOf("/"))), sent, answer: undefined })
}

interface Operation {
  readonly name: string
  readonly method: Operations.Any["method"]
  readonly streamed: boolean
  readonly encodeExit: (exit: Exit.Exit<unknown, RequestError>) => RpcMessage.ResponseExitEncoded["exit"]
}

const exitEncoder = (tag: string): Operation["encodeExit"] =>
  Schema.encodeSync(
    Rpc.exitSchema(ListenRpcs.requests.get(tag)!) as unknown as Schema.Schema<
      Exit.Exit<unknown, RequestError>,
      RpcMessage.ResponseExitEncoded["exit"]
    >
  )

/** With the server's exit encoder. */
const operations: ReadonlyMap<string, Operation> = new Map(
  Object.entries(Operations.requests).flatMap(([name, operation]) =>
    [false, true].map((streamed) => {
      const tag = streamed ? streamedTag(name) : name
      return [tag, { name, method: operation.method, streamed, encodeExit: exitEncoder(tag) }]
    })
  )
)

const isPayload = Schema.is(RequestPayload)

type Step =
  | { readonly _tag: "Server"; readonly message: RpcMessage.FromClientEncoded }
  /** C86 */
  | { readonly _tag: "Refused"; readonly frame: RpcMessage.ResponseExitEncoded }
  | { readonly _tag: "Taken" }

const taken: Step = { _tag: "Taken" }

const step = (
  listener: Listener,
  clientId: number,
  message: RpcMessage.FromClientEncoded,
  relay: boolean,
  write: (clientId: number, frame: RpcMessage.ResponseExitEncoded) => void
): Step => {
  switch (message._tag) {
    case "Request": {
      const operation = operations.get(message.tag)
      if (relay && operation !== undefined && typeof message.id === "string" && isPayload(message.payload)) {
        // These errors cross processes as fields: their stacks were most of a refusal's cost.
        const stackTraceLimit = Error.stackTraceLimit
        Error.stackTraceLimit = 0
        try {
          return operation.streamed
            ? (refusedNow(listener, message.id, operation, message.payload) ??
                toServer(clientId, withPeerTrace(message, message.payload)))
            : relayNow(listener, clientId, message, operation, message.payload, write)
        } finally {
          Error.stackTraceLimit = stackTraceLimit
        }
      }
      return toServer(clientId, message)
    }
    case "Interrupt": {
      const key = keyOf(clientId, message.requestId)
      const call = listener.calls.get(key)
      listener.calls.delete(key)
      if (call === undefined) return { _tag: "Server", message }
      call.sent.end("interrupted")
      if (call.answer === undefined) return { _tag: "Server", message }
      call.answer(Exit.interrupt(FiberId.none))
      return taken
    }
    default:
      return { _tag: "Server", message }
  }
}

/** Without `clientId` (the listener closes): every call, answered as interrupted. */
const endTaken = (calls: Calls, clientId?: number): void => {
  for (const [key, call] of calls) {
    if (call.answer === undefined || (clientId !== undefined && call.clientId !== clientId)) continue
    calls.delete(key)
    call.sent.end("interrupted")
    if (clientId === undefined) call.answer(Exit.interrupt(FiberId.none))
  }
}

/** C117 */
const admitted = (
  listener: Listener,
  name: string,
  method: Operations.Any["method"],
  payload: typeof RequestPayload.Type
): Either.Either<Grants.Target, RequestError> => {
  const found = Grants.admitted(listener, name, payload)
  if (Either.isLeft(found)) {
    const target = Grants.target(listener, payload.id, name)
    const workerId = Either.isRight(target) ? target.right.workerId : undefined
    listener.registry.refusedBefore(workerId, method, "socket", found.left)
  }
  return found
}

const toServer = (clientId: number, message: RpcMessage.RequestEncoded): Step => {
  const headers = Array.isArray(message.headers)
    ? message.headers.filter((header) => !Array.isArray(header) || header[0] !== callHeader)
    : []
  headers.push([callHeader, keyOf(clientId, message.id)])
  return { _tag: "Server", message: { ...message, headers } }
}

const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

// C83
const peerTrace = (
  message: RpcMessage.RequestEncoded,
  payload: typeof RequestPayload.Type
): OwnerProtocol.TraceContext | undefined =>
  payload.trace ??
  (typeof message.traceId === "string" && typeof message.spanId === "string"
    ? [message.traceId, message.spanId, message.sampled !== false]
    : undefined)

// C83
const withPeerTrace = (
  message: RpcMessage.RequestEncoded,
  payload: typeof RequestPayload.Type
): RpcMessage.RequestEncoded => {
  const trace = payload.trace === undefined ? peerTrace(message, payload) : undefined
  return trace === undefined ? message : { ...message, payload: { ...payload, trace } }
}

const relayNow = (
  listener: Listener,
  clientId: number,
  message: RpcMessage.RequestEncoded & { readonly id: string },
  operation: Operation,
  payload: typeof RequestPayload.Type,
  write: (clientId: number, frame: RpcMessage.ResponseExitEncoded) => void
): Step => {
  const requestId = message.id
  const found = admitted(listener, operation.name, operation.method, payload)
  if (Either.isLeft(found)) return refusal(requestId, operation, Exit.fail(Grants.renamed(found.left, payload.id)))
  const { grant, workerId } = found.right
  const key = keyOf(clientId, requestId)
  let refused: Exit.Exit<unknown, RequestError> | undefined
  let begun = false
  const answer = (exit: Exit.Exit<unknown, RequestError>) => {
    const shown = Exit.isSuccess(exit)
      ? Exit.succeed(Grants.shown(grant, operation.name, exit.value))
      : Exit.mapError(exit, (error) => Grants.renamed(error, payload.id, grant))
    if (!begun) return void (refused = shown)
    if (sent !== undefined) grant?.requests.delete(sent.requestId)
    listener.calls.delete(key)
    write(clientId, exitFrame(requestId, operation, shown))
  }
  // `begin` may refuse before it returns.
  const sent: Sent | undefined = listener.registry.begin(
    {
      id: workerId,
      method: operation.method,
      params: payload.params,
      budgetMs: remaining(payload.deadline),
      idleMs: payload.idleMs,
      onProgress: undefined,
      saveTo: payload.saveTo,
      // Without "fail" the worker's spill applies.
      spill: payload.spill,
      trace: peerTrace(message, payload),
      surface: "socket"
    },
    answer
  )
  begun = true
  if (sent === undefined) return refusal(requestId, operation, refused!)
  grant?.requests.add(sent.requestId)
  listener.calls.set(key, { clientId, sent, answer })
  return taken
}

const refusedNow = (
  listener: Listener,
  requestId: string,
  operation: Operation,
  payload: typeof RequestPayload.Type
): Step | undefined => {
  const found = admitted(listener, operation.name, operation.method, payload)
  const error = Either.isLeft(found)
    ? found.left
    : listener.registry.refused(found.right.workerId, operation.method, "socket")
  const grant = Either.isRight(found) ? found.right.grant : undefined
  return error === undefined
    ? undefined
    : refusal(requestId, operation, Exit.fail(Grants.renamed(error, payload.id, grant)))
}

const refusal = (requestId: string, operation: Operation, exit: Exit.Exit<unknown, RequestError>): Step => ({
  _tag: "Refused",
  frame: exitFrame(requestId, operation, exit)
})

/** Refused by its schema: the defect the server would send. */
const exitFrame = (
  requestId: string,
  operation: Operation,
  exit: Exit.Exit<unknown, RequestError>
): RpcMessage.ResponseExitEncoded => {
  try {
    return { _tag: "Exit", requestId, exit: operation.encodeExit(exit) }
  } catch (cause) {
    return { _tag: "Exit", requestId, exit: operation.encodeExit(Exit.die(String(cause))) }
  }
}

const request = (
  listener: Listener,
  name: string,
  payload: typeof RequestPayload.Type,
  onProgress: ((progress: Operations.Progress) => void) | undefined,
  call: string | undefined
): Effect.Effect<{ readonly target: Grants.Target; readonly value: unknown }, RequestError> =>
  Effect.suspend(() => {
    const operation = Operations.requests[name as keyof Operations.Requests]
    const found = admitted(listener, name, operation.method, payload)
    if (Either.isLeft(found)) return Effect.fail(Grants.renamed(found.left, payload.id))
    return Effect.withFiberRuntime<unknown, RequestError>((fiber) =>
      Effect.async<unknown, RequestError>((resume) => {
        // `begin` may refuse before it returns.
        let sent: ReturnType<typeof listener.registry.begin> = undefined
        sent = listener.registry.begin(
          {
            id: found.right.workerId,
            method: operation.method,
            params: payload.params,
            budgetMs: remaining(payload.deadline),
            idleMs: payload.idleMs,
            onProgress,
            saveTo: payload.saveTo,
            // Without "fail" the worker's spill applies.
            spill: payload.spill,
            // C83
            trace: OwnerProtocol.traceContextOfFiber(fiber) ?? payload.trace,
            surface: "socket"
          },
          (exit) => {
            if (call !== undefined) listener.calls.delete(call)
            if (sent !== undefined) found.right.grant?.requests.delete(sent.requestId)
            resume(exit)
          }
        )
        if (sent === undefined) return undefined
        const begun = sent
        found.right.grant?.requests.add(begun.requestId)
        if (call !== undefined) began(listener.calls, call, begun)
        return Effect.sync(() => {
          if (call !== undefined) listener.calls.delete(call)
          begun.end("interrupted")
        })
      })
    ).pipe(
      (sending) => OwnerProtocol.withCarried(sending, payload.trace),
      Effect.map((value) => ({ target: found.right, value: Grants.shown(found.right.grant, name, value) })),
      Effect.mapError((error) => Grants.renamed(error, payload.id, found.right.grant))
    )
  })

const streamed = (listener: Listener, name: string, payload: typeof RequestPayload.Type, call: string | undefined) =>
  Stream.asyncPush<
    ({ readonly _tag: "Progress" } & Operations.Progress) | { _tag: "Result"; value: unknown },
    RequestError
  >(
    (emit) =>
      request(listener, name, payload, (progress) => emit.single({ _tag: "Progress", ...progress }), call).pipe(
        Effect.matchEffect({
          onFailure: (error) => Effect.sync(() => emit.fail(error)),
          onSuccess: ({ value }) =>
            Effect.sync(() => {
              emit.single({ _tag: "Result", value })
              emit.end()
            })
        }),
        Effect.forkScoped
      ),
    { bufferSize: "unbounded" }
  )

const lifecycle = (listener: Listener) => {
  const { registry } = listener
  const by = <A, E extends McpWorkerError>(
    id: string,
    operation: string,
    f: (target: Grants.Target) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | UnknownWorker | HostUnavailable> =>
    Effect.suspend((): Effect.Effect<A, E | UnknownWorker | HostUnavailable> => {
      if (listener.closing) return Effect.fail(Grants.closingError())
      return Either.match(Grants.target(listener, id, operation), {
        onLeft: Effect.fail,
        onRight: (found) => Effect.mapError(f(found), (error) => Grants.renamed(error, id, found.grant))
      })
    })
  return {
    open: (payload: {
      readonly config: string
      readonly deadline?: number | undefined
      readonly isolation?: "thread" | "process" | undefined
      readonly maxOldGenerationSizeMb?: number | undefined
      readonly tools?: ToolFilter.ToolFilter | undefined
    }) =>
      Effect.suspend((): Effect.Effect<string, McpWorkerError> => {
        if (listener.closing) return Effect.fail(Grants.closingError())
        if (!listener.acceptWorkerIds) {
          return Effect.fail(
            new InvalidInput({
              where: "config",
              path: "",
              message: "this listener accepts grants only: it does not open workers",
              delivery: "not_sent"
            })
          )
        }
        return Either.match(ServerConfig.fromWire(payload.config), {
          onLeft: Effect.fail,
          onRight: (config) =>
            registry.openConfig(config, {
              timeout: remaining(payload.deadline),
              isolation: payload.isolation,
              maxOldGenerationSizeMb: payload.maxOldGenerationSizeMb,
              tools: payload.tools
            })
        })
      }),
    status: ({ id }: { readonly id: string }) =>
      by(id, "status", ({ grant, workerId }) =>
        Effect.map(registry.service.status(workerId), (status) => Grants.statusShown(grant, id, status))
      ),
    cancel: ({ id, requestId }: { readonly id: string; readonly requestId: string }) =>
      by(id, "cancel", ({ grant, workerId }) =>
        // C119
        grant === undefined || grant.requests.has(requestId)
          ? registry.service.cancel(workerId, requestId)
          : Effect.fail(new RequestNotPending({ workerId, requestId }))
      ),
    close: ({ id, deadline }: { readonly id: string; readonly deadline?: number | undefined }) =>
      by(id, "close", ({ grant, workerId }) =>
        Effect.map(registry.service.close(workerId, { timeout: remaining(deadline) }), (status) => {
          Grants.sweep(listener.grants, (open) => open !== workerId, Date.now())
          return Grants.statusShown(grant, id, status)
        })
      ),
    events: (
      payload: {
        readonly id: string
        readonly subscription: string
        readonly capacity: number
        readonly end?: boolean | undefined
      },
      { clientId }: { readonly clientId: number }
    ) => {
      // Keyed by connection: no other can name them.
      const key = `${listener.prefix}/${clientId}/${payload.subscription}`
      let keys = listener.subscriptions.get(clientId)
      const pull = (workerId: string, known: Set<string>) =>
        Effect.tap(registry.pullEvents(workerId, key, payload.capacity, payload.end === true), (batch) =>
          Effect.sync(() => (batch.done || payload.end === true) && known.delete(key))
        )
      // It reads on whatever became of the grant since.
      if (keys?.has(key) === true) return pull("", keys)
      return by(payload.id, "events", ({ workerId }) => {
        if (keys === undefined) listener.subscriptions.set(clientId, (keys = new Set()))
        keys.add(key)
        return pull(workerId, keys)
      })
    }
  }
}

const disconnected = (listener: Listener, clientId: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    endTaken(listener.calls, clientId)
    const keys = listener.subscriptions.get(clientId)
    listener.subscriptions.delete(clientId)
    if (keys === undefined) return Effect.void
    return Effect.forEach(keys, (key) => Effect.ignore(listener.registry.pullEvents("", key, 1, true)), {
      discard: true
    })
  })

/** C86 */
const rest = (listener: Listener): Effect.Effect<void> =>
  Effect.map(Effect.serviceOption(NodeSocket.NetSocket), (conn) => {
    const peer = Option.isSome(conn) ? listener.peers.get(conn.value) : undefined
    if (peer !== undefined) Frames.rest(peer, Frames.restAfterRefusalMs)
  })

const watched = (listener: Listener, protocol: RpcServer.Protocol["Type"], tracing: boolean) =>
  Effect.gen(function* () {
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const write = (clientId: number, frame: RpcMessage.ResponseExitEncoded) =>
      void runFork(protocol.send(clientId, frame))
    const disconnects = yield* Mailbox.make<number>()
    yield* protocol.disconnects.take.pipe(
      Effect.tap((clientId) => disconnected(listener, clientId)),
      Effect.flatMap((clientId) => disconnects.offer(clientId)),
      Effect.forever,
      Effect.interruptible,
      Effect.forkScoped
    )
    const run: RpcServer.Protocol["Type"]["run"] = (f) =>
      protocol.run((clientId, message) => {
        const next = step(listener, clientId, message, !tracing, write)
        switch (next._tag) {
          case "Server":
            return f(clientId, next.message)
          case "Refused":
            return Effect.zipRight(rest(listener), protocol.send(clientId, next.frame))
          case "Taken":
            return Effect.void
        }
      })
    return { ...protocol, run, disconnects }
  })

const handlers = (listener: Listener) => {
  const requests = Object.fromEntries(
    Object.keys(Operations.requests).flatMap((name) => [
      [
        name,
        (payload: typeof RequestPayload.Type, { headers }: { readonly headers: Headers.Headers }) =>
          Effect.map(request(listener, name, payload, undefined, callOf(headers)), (r) => r.value)
      ],
      [
        streamedTag(name),
        (payload: typeof RequestPayload.Type, { headers }: { readonly headers: Headers.Headers }) =>
          streamed(listener, name, payload, callOf(headers))
      ]
    ])
  )
  return { ...lifecycle(listener), ...requests }
}

const bounded = (
  listener: Listener,
  server: SocketServer.SocketServer["Type"],
  idleMs: number,
  maxConnections: number,
  budget: Frames.Budget
): SocketServer.SocketServer["Type"] => {
  let open = 0
  return {
    ...server,
    run: (handler) =>
      server.run((socket) =>
        Effect.flatMap(Effect.serviceOption(NodeSocket.NetSocket), (conn) => {
          if (Option.isNone(conn)) return handler(socket)
          const netSocket = conn.value
          if (open >= maxConnections) {
            netSocket.destroy()
            return Effect.void
          }
          open++
          const peer = Frames.join(budget, {
            pause: () => netSocket.pause(),
            resume: () => netSocket.resume(),
            close: () => netSocket.destroy(),
            unread: (bytes) => netSocket.unshift(bytes)
          })
          listener.peers.set(netSocket, peer)
          netSocket.once("close", () => {
            open--
            Frames.leave(budget, peer)
          })
          netSocket.setTimeout(idleMs, () => netSocket.destroy())
          // C110
          return handler(Frames.accounted(Frames.guarded(socket, netSocket), budget, peer))
        })
      )
  }
}

/** @internal */
export interface Running {
  readonly path: string
  readonly stop: () => void
}

const durationMs = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.decode(input))

/** @internal */
export const make = (
  registry: HostRegistry,
  grants: Grants.Grants,
  options: ListenOptions
): Effect.Effect<Running, SocketFile.ListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const listener: Listener = {
      registry,
      grants,
      acceptWorkerIds: options.acceptWorkerIds === true,
      prefix: `listen/${randomBytes(9).toString("base64url")}`,
      subscriptions: new Map(),
      calls: new Map(),
      peers: new WeakMap(),
      closing: false
    }
    const prepared = yield* SocketFile.prepare(options.path)
    yield* Effect.addFinalizer(() => SocketFile.remove(prepared))
    const socketServer = yield* NodeSocketServer.make({ path: prepared.path }).pipe(
      Effect.mapError(
        (error) => new SocketFile.ListenError({ path: prepared.path, reason: "listen", detail: String(error.cause) })
      )
    )
    yield* SocketFile.restrict(prepared)
    const maxFrameBytes = options.maxFrameBytes ?? Frames.defaultMaxFrameBytes
    const budget = Frames.makeBudget(options.maxBufferedBytes ?? Frames.defaultMaxBufferedBytes)
    const guard: Frames.Guard = {
      // Such a listener already trusts every peer with the host's rights.
      grantlessBytes: listener.acceptWorkerIds ? maxFrameBytes : Frames.grantlessFrameBytes,
      admits: (head) => Grants.shownIn(grants, head, Date.now()),
      budget
    }
    const sockets = bounded(
      listener,
      socketServer,
      // A client in use pings every second: a shorter bound would close busy connections.
      Math.max(durationMs(options.idleTimeout, defaultIdleMs), 2 * SocketCaller.pingEveryMs),
      options.maxConnections ?? defaultMaxConnections,
      budget
    )
    const socketProtocol = yield* RpcServer.makeProtocolSocketServer.pipe(
      Effect.provideService(SocketServer.SocketServer, sockets),
      Effect.provideService(RpcSerialization.RpcSerialization, Frames.make(maxFrameBytes, guard))
    )
    const tracing = yield* Effect.withFiberRuntime<boolean>((fiber) => Effect.succeed(isTracing(fiber)))
    const protocol = yield* watched(listener, socketProtocol, tracing)
    // Before the server is interrupted, so the calls taken here end answered.
    yield* Effect.addFinalizer(() => Effect.sync(() => endTaken(listener.calls)))
    const context = yield* Layer.build(ListenRpcs.toLayer(handlers(listener) as never))
    yield* RpcServer.make(ListenRpcs, { disableFatalDefects: true, disableTracing: !tracing }).pipe(
      Effect.provideService(RpcServer.Protocol, protocol),
      Effect.provide(context),
      Effect.interruptible,
      Effect.forkScoped
    )
    return { path: prepared.path, stop: () => void (listener.closing = true) }
  })
