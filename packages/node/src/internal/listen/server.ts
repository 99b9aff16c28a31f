/**
 * The listener: the host's operations served on a Unix domain socket to other processes, with `@effect/rpc`'s
 * `RpcServer` over the socket protocol of `@effect/platform-node`'s `NodeSocketServer`. Each call runs in a fiber of
 * the server; its request is begun on the host registry in the step that starts it, and ended (cancelled exactly at
 * the server) when the fiber is interrupted: by the caller's `Interrupt`, by its connection closing (a process that
 * died), or by the listener closing.
 *
 * What a caller presents is a grant (`grants.ts`), or a worker id where the listener accepts them. A grant's rights
 * are checked before anything is sent, and errors and status name what the caller presented, never the worker id
 * behind a grant.
 *
 * @internal
 */
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SocketServer from "@effect/platform/SocketServer"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import {
  HostUnavailable,
  InvalidInput,
  McpWorkerError,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import * as Operations from "@mcp-worker/core/Operations"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import type * as ToolFilter from "@mcp-worker/core/ToolFilter"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import type { ListenOptions } from "../../NodeMcpWorkers.js"
import type { HostRegistry } from "../host/layer.js"
import { contextOf, isTracing } from "../shared/traced.js"
import { checkSavePath } from "../transport/responseSave.js"
import * as Connection from "./connection.js"
import * as Frames from "./frames.js"
import * as Grants from "./grants.js"
import { ListenRpcs, type RequestPayload, streamedTag } from "./rpcs.js"
import * as SocketFile from "./socketFile.js"

const encodeError = Schema.encodeSync(McpWorkerError)
const decodeError = Schema.decodeUnknownSync(McpWorkerError)

/** Default: a connection that sends nothing for this long is closed (a client in use pings every second). */
const defaultIdleMs = 10_000
const defaultMaxConnections = 1_024

/** One listener's state, passed to the functions below. */
interface Listener {
  readonly registry: HostRegistry
  readonly grants: Grants.Grants
  readonly acceptWorkerIds: boolean
  /** Names this listener's subscriptions at the host, apart from any other's. */
  readonly prefix: string
  /** The `events` subscriptions of each connection, by the server's id for it. */
  readonly subscriptions: Map<number, Set<string>>
  closing: boolean
}

/** What a caller's id names for one operation: the worker, and the grant it came through. */
interface Target {
  readonly workerId: string
  readonly grant: Grants.Grant | undefined
}

const closingError = () =>
  new HostUnavailable({ message: "the mcp-worker host is closing; the request was not sent", delivery: "not_sent" })

/**
 * The worker `id` names for `operation`, or `UnknownWorker` naming `id`: an unknown, expired, revoked or forged grant,
 * an operation the grant does not allow, and a plain id where only grants are accepted all look alike.
 */
const target = (listener: Listener, id: string, operation: string): Either.Either<Target, UnknownWorker> => {
  const grant = Grants.resolve(listener.grants, id, Date.now())
  if (grant !== undefined && grant.operations.has(operation)) return Either.right({ workerId: grant.workerId, grant })
  if (grant === undefined && listener.acceptWorkerIds) return Either.right({ workerId: id, grant: undefined })
  return Either.left(new UnknownWorker({ workerId: id, delivery: "not_sent" }))
}

/** An error as the caller must see it: naming what it presented (re-made through its schema, fields and all). */
const renamed = <E extends McpWorkerError>(error: E, id: string): E => {
  if (!("workerId" in error) || error.workerId === id) return error
  return decodeError({ ...encodeError(error), workerId: id }) as E
}

const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

const invalid = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

/**
 * What a caller sent, checked as the host server checks a remote thread's (the owner must get an object's JSON text),
 * and against its grant: the tool allow-list, and where `saveTo` may write (only under the grant's `saveDir`: a path of
 * the host's file system, which the owner writes). Nothing is sent before these pass.
 */
const checked = (target: Target, name: string, payload: typeof RequestPayload.Type): InvalidInput | undefined => {
  const params = JsonValue.decode(payload.params, { where: "arguments", root: "params" })
  if (Either.isLeft(params)) return params.left
  if (!JsonValue.isJsonObject(params.right)) return invalid("params", "the request params must be a plain object")
  const grant = target.grant
  if (grant?.tools !== undefined && name === "callTool") {
    const tool = params.right.name
    if (typeof tool !== "string" || !grant.tools.has(tool))
      return invalid("name", "this grant does not allow that tool")
  }
  if (payload.saveTo === undefined) return undefined
  if (grant !== undefined && (grant.saveDir === undefined || !Grants.isUnder(grant.saveDir, payload.saveTo))) {
    return invalid("options.saveTo", "this grant does not allow saveTo there")
  }
  const problem = checkSavePath(payload.saveTo)
  return problem === undefined ? undefined : invalid("options.saveTo", problem)
}

/** `listTools` through a grant with an allow-list shows only those tools. */
const shown = (grant: Grants.Grant | undefined, name: string, result: unknown): unknown => {
  const tools = grant?.tools
  if (tools === undefined || name !== "listTools") return result
  const list = result as { tools?: ReadonlyArray<{ name?: unknown }> }
  return { ...list, tools: (list.tools ?? []).filter((tool) => typeof tool.name === "string" && tools.has(tool.name)) }
}

/**
 * Begins one request on the registry and waits for its end; interrupting it ends the request (the owner cancels
 * exactly it).
 */
const request = (
  listener: Listener,
  name: string,
  payload: typeof RequestPayload.Type,
  onProgress: ((progress: Operations.Progress) => void) | undefined
): Effect.Effect<{ readonly target: Target; readonly value: unknown }, RequestError> =>
  Effect.suspend(() => {
    if (listener.closing) return Effect.fail(closingError())
    const found = target(listener, payload.id, name)
    if (Either.isLeft(found)) return Effect.fail(found.left)
    const refused = checked(found.right, name, payload)
    if (refused !== undefined) return Effect.fail(refused)
    const operation = Operations.requests[name as keyof Operations.Requests]
    return Effect.withFiberRuntime<unknown, RequestError>((fiber) =>
      Effect.async<unknown, RequestError>((resume) => {
        const sent = listener.registry.begin(
          found.right.workerId,
          operation.method,
          payload.params,
          remaining(payload.deadline),
          onProgress,
          payload.saveTo,
          // A socket caller's own spill directory is refused in its process; without "fail", the worker's own applies.
          payload.spill,
          undefined,
          // The rpc server's span of the call (a child of the peer's) is the owner's parent, as a thread's is (C83).
          isTracing(fiber) ? contextOf(fiber) : undefined,
          resume,
          "socket"
        )
        return sent === undefined ? undefined : Effect.sync(() => sent.end("interrupted"))
      })
    ).pipe(
      Effect.map((value) => ({ target: found.right, value: shown(found.right.grant, name, value) })),
      Effect.mapError((error) => renamed(error, payload.id))
    )
  })

/** The streamed twin of a request: its progress, then its result, as elements of one stream. */
const streamed = (listener: Listener, name: string, payload: typeof RequestPayload.Type) =>
  Stream.asyncPush<
    ({ readonly _tag: "Progress" } & Operations.Progress) | { _tag: "Result"; value: unknown },
    RequestError
  >(
    (emit) =>
      request(listener, name, payload, (progress) => emit.single({ _tag: "Progress", ...progress })).pipe(
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
    f: (target: Target) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | UnknownWorker | HostUnavailable> =>
    Effect.suspend((): Effect.Effect<A, E | UnknownWorker | HostUnavailable> => {
      if (listener.closing) return Effect.fail(closingError())
      return Either.match(target(listener, id, operation), {
        onLeft: Effect.fail,
        onRight: (found) => Effect.mapError(f(found), (error) => renamed(error, id))
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
        if (listener.closing) return Effect.fail(closingError())
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
      by(id, "status", ({ workerId }) =>
        Effect.map(registry.service.status(workerId), (status) => ({ ...status, workerId: id }))
      ),
    cancel: ({ id, requestId }: { readonly id: string; readonly requestId: string }) =>
      by(id, "cancel", ({ workerId }) => registry.service.cancel(workerId, requestId)),
    close: ({ id, deadline }: { readonly id: string; readonly deadline?: number | undefined }) =>
      by(id, "close", ({ workerId }) =>
        Effect.map(registry.service.close(workerId, { timeout: remaining(deadline) }), (status) => {
          Grants.sweep(listener.grants, (open) => open !== workerId, Date.now())
          return { ...status, workerId: id }
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
      // Subscriptions live in the connection that made them: no other connection can name them, and they end with it.
      const key = `${listener.prefix}/${clientId}/${payload.subscription}`
      let keys = listener.subscriptions.get(clientId)
      const pull = (workerId: string, known: Set<string>) =>
        Effect.tap(registry.pullEvents(workerId, key, payload.capacity, payload.end === true), (batch) =>
          Effect.sync(() => (batch.done || payload.end === true) && known.delete(key))
        )
      // A subscription this connection made was granted then: it reads on to its end (the worker's close included),
      // whatever became of the grant since.
      if (keys?.has(key) === true) return pull("", keys)
      return by(payload.id, "events", ({ workerId }) => {
        if (keys === undefined) listener.subscriptions.set(clientId, (keys = new Set()))
        keys.add(key)
        return pull(workerId, keys)
      })
    }
  }
}

/** A connection closed: its subscriptions end at the host. */
const disconnected = (listener: Listener, clientId: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const keys = listener.subscriptions.get(clientId)
    listener.subscriptions.delete(clientId)
    if (keys === undefined) return Effect.void
    return Effect.forEach(keys, (key) => Effect.ignore(listener.registry.pullEvents("", key, 1, true)), {
      discard: true
    })
  })

/** The protocol with the listener's part in each disconnect, ahead of the server's own. */
const watched = (listener: Listener, protocol: RpcServer.Protocol["Type"]) =>
  Effect.gen(function* () {
    const disconnects = yield* Mailbox.make<number>()
    yield* protocol.disconnects.take.pipe(
      Effect.tap((clientId) => disconnected(listener, clientId)),
      Effect.flatMap((clientId) => disconnects.offer(clientId)),
      Effect.forever,
      Effect.interruptible,
      Effect.forkScoped
    )
    return { ...protocol, disconnects }
  })

/** Every operation's handler, by its tag: the requests derived from the operation table. */
const handlers = (listener: Listener) => {
  const requests = Object.fromEntries(
    Object.keys(Operations.requests).flatMap((name) => [
      [
        name,
        (payload: typeof RequestPayload.Type) => Effect.map(request(listener, name, payload, undefined), (r) => r.value)
      ],
      [streamedTag(name), (payload: typeof RequestPayload.Type) => streamed(listener, name, payload)]
    ])
  )
  return { ...lifecycle(listener), ...requests }
}

/**
 * The socket server with the listener's bounds on connections: at most `maxConnections` at once (a connection past it
 * is closed at once), and each closed after `idleMs` in which it sent nothing.
 */
const bounded = (
  server: SocketServer.SocketServer["Type"],
  idleMs: number,
  maxConnections: number
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
          netSocket.once("close", () => open--)
          netSocket.setTimeout(idleMs, () => netSocket.destroy())
          return handler(socket)
        })
      )
  }
}

/** A running listener. @internal */
export interface Running {
  readonly path: string
  /** From now on new calls are refused (the host is closing); those in flight run on. */
  readonly stop: () => void
}

const durationMs = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : Duration.toMillis(Duration.decode(input))

/**
 * Listens on `options.path` in the current scope: the socket file is prepared, served, and removed when the scope
 * closes, after every call in flight was answered.
 *
 * @internal
 */
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
    const sockets = bounded(
      socketServer,
      // A client in use pings every second: a shorter bound would close connections that are busy, not idle.
      Math.max(durationMs(options.idleTimeout, defaultIdleMs), 2 * Connection.pingEveryMs),
      options.maxConnections ?? defaultMaxConnections
    )
    const socketProtocol = yield* RpcServer.makeProtocolSocketServer.pipe(
      Effect.provideService(SocketServer.SocketServer, sockets),
      Effect.provideService(RpcSerialization.RpcSerialization, Frames.make("server", maxFrameBytes))
    )
    const protocol = yield* watched(listener, socketProtocol)
    const context = yield* Layer.build(ListenRpcs.toLayer(handlers(listener) as never))
    // Interrupted when the scope closes: every call still in flight is interrupted (its request ended at the server)
    // and answered, then the connections and the socket close.
    // Spans only where a real tracer is installed: then each call is a span, the child of its caller's in the other
    // process (`RpcServer` reads the span context every request carries).
    const tracing = yield* Effect.withFiberRuntime((fiber) => Effect.succeed(isTracing(fiber)))
    yield* RpcServer.make(ListenRpcs, { disableFatalDefects: true, disableTracing: !tracing }).pipe(
      Effect.provideService(RpcServer.Protocol, protocol),
      Effect.provide(context),
      Effect.interruptible,
      Effect.forkScoped
    )
    return { path: prepared.path, stop: () => void (listener.closing = true) }
  })
