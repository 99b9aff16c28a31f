/**
 * One connection of a client to a listener, as an `@effect/rpc` client protocol over `NodeSocket`. It knows what the
 * delivery rules need: whether a request's frame was ever written, and whether the host was heard from lately.
 *
 * - A request goes out only on an open connection whose host was heard from within `staleAfterMs`; otherwise a
 *   `Ping` goes first, and a host that does not answer within `ackWithinMs` gets nothing (`HostUnavailable`,
 *   `not_sent`, and the connection is dropped). A connection that never opened sent nothing.
 * - Once a request's frame was handed to the socket, a lost connection (`connection_lost`) or a host silent for
 *   `silentAfterMs` while calls are in flight (`host_unresponsive`; the connection is then closed, and the listener
 *   ends what it was running of it as soon as it runs again) leave its outcome unknown.
 * - Nothing is resent: a dead connection is never reopened; the client's next call opens a new one.
 *
 * @internal
 */
import * as RpcClient from "@effect/rpc/RpcClient"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import type * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import type * as Socket from "@effect/platform/Socket"
import { HostUnavailable, InvalidInput, type McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import * as Frames from "./frames.js"
import * as Handshake from "./handshake.js"

/** A request goes out without a `Ping` first only if the host was heard from this recently. @internal */
export const staleAfterMs = 1_500
/** How long a `Ping` before a request may wait for its answer; past it the request is not sent. @internal */
export const ackWithinMs = 750
/** While calls are in flight, a `Ping` goes out this often. @internal */
export const pingEveryMs = 1_000
/** A host not heard from for this long while calls are in flight is taken for stalled or gone. @internal */
export const silentAfterMs = 3_000
/**
 * A connection with nothing in flight for this long is closed by the client, before a listener's idle bound (at least
 * 2 s) could close it under a request being written; the next call opens a new one.
 *
 * @internal
 */
export const idleAfterMs = 1_000

/** Why a request was provably not sent: what its caller is told. @internal */
export class NotSent {
  readonly _tag = "NotSent"
  constructor(readonly error: McpWorkerError) {}
}

/** Why a connection ended after requests may have been read. @internal */
export class Lost {
  readonly _tag = "Lost"
  constructor(readonly reason: "connection_lost" | "host_unresponsive") {}
}

const clientError = (cause: NotSent | Lost) =>
  new RpcClientError({
    reason: "Protocol",
    message: cause._tag === "NotSent" ? cause.error.message : cause.reason,
    cause
  })

/** A connection's state, read by the client that owns it. @internal */
export interface Connection {
  state: "connecting" | "open" | "dead"
  /** Calls and subscriptions in flight on it: while there are any, it keeps the process alive and pings. */
  inFlight: number
  /** When the host last sent anything; `0` until it first did (a request then waits for a `Ping`'s answer). */
  lastHeard: number
  /** When the connection opened: silence is counted from here until the host first speaks. */
  openedAt: number
  lastSent: number
  lost: Lost["reason"]
  /** Why the listener refused the handshake (C110): nothing was sent on this connection. */
  rejected: string | undefined
  readonly socket: Net.Socket
  readonly opened: Deferred.Deferred<void, NotSent>
  /** Completed by the next frame from the host. */
  heard: Deferred.Deferred<void> | undefined
  idle: ReturnType<typeof setTimeout> | undefined
}

const noHost = (path: string) =>
  new NotSent(
    new HostUnavailable({ message: `no mcp-worker host listens on ${path}; nothing was sent`, delivery: "not_sent" })
  )

const refused = (reason: string) =>
  new NotSent(
    new HostUnavailable({ message: `the mcp-worker host refused the connection: ${reason}`, delivery: "not_sent" })
  )

const unresponsive = () =>
  new NotSent(
    new HostUnavailable({
      message: `the mcp-worker host did not answer within ${ackWithinMs} ms; the request was not sent`,
      delivery: "not_sent"
    })
  )

/** Marks a call in flight (or over) on the connection: only a connection in use keeps the process alive. @internal */
export const use = (connection: Connection, delta: 1 | -1): void => {
  connection.inFlight += delta
  if (connection.inFlight === 1 && delta === 1) {
    clearTimeout(connection.idle)
    connection.socket.ref()
  }
  if (connection.inFlight === 0) {
    connection.socket.unref()
    connection.idle = setTimeout(closeIdle, idleAfterMs, connection)
    connection.idle.unref()
  }
}

const closeIdle = (connection: Connection) => {
  if (connection.inFlight > 0 || connection.state === "dead") return
  // Nothing is in flight, so nothing is lost: the state says so before the socket goes.
  connection.state = "dead"
  connection.socket.end()
}

/** Ends the connection: what was in flight on it is answered with `lost` (its outcome unknown). @internal */
export const drop = (connection: Connection, lost: Lost["reason"]): void => {
  if (connection.state === "dead") return
  connection.lost = lost
  connection.state = "dead"
  connection.socket.destroy()
}

const silentSince = (connection: Connection) => Math.max(connection.lastHeard, connection.openedAt)

/** What the parts of one connection's protocol share: its state, where it goes, its framing and its writer. */
interface Wire {
  readonly connection: Connection
  readonly path: string
  readonly maxFrameBytes: number
  readonly parser: RpcSerialization.Parser
  /** The encoded `Ping`, written as is by the watchdog and before a request to a host not heard from lately. */
  readonly ping: string
  readonly write: (data: string) => Effect.Effect<void, Socket.SocketError>
}

/** Proves the host alive before a request is written: a `Ping` answered within `ackWithinMs`. */
const live = (wire: Wire) =>
  Effect.gen(function* () {
    const { connection } = wire
    yield* Deferred.await(connection.opened)
    if (Date.now() - connection.lastHeard <= staleAfterMs) return
    let heard = connection.heard
    if (heard === undefined) {
      heard = yield* Deferred.make<void>()
      connection.heard = heard
      yield* Effect.ignore(wire.write(wire.ping))
    }
    const answered = yield* Deferred.await(heard).pipe(
      Effect.timeoutTo({ duration: ackWithinMs, onSuccess: () => true, onTimeout: () => false })
    )
    if (connection.state === "dead") {
      return yield* Effect.fail(connection.rejected === undefined ? noHost(wire.path) : refused(connection.rejected))
    }
    if (!answered) {
      // Whatever the host reads of this connection later, no request of it was written.
      drop(connection, "host_unresponsive")
      return yield* Effect.fail(unresponsive())
    }
  })

/** The platform's socket over the connecting one, in the current scope: a socket that fails to connect is `Open`. */
const openSocket = (netSocket: Net.Socket): Effect.Effect<Socket.Socket, never, Scope.Scope> =>
  NodeSocket.fromDuplex(
    Effect.acquireRelease(
      Effect.async<Net.Socket, Socket.SocketError>((resume) => {
        if (!netSocket.connecting && !netSocket.destroyed) return resume(Effect.succeed(netSocket))
        netSocket.once("connect", () => resume(Effect.succeed(netSocket)))
        netSocket.once("error", (cause) =>
          resume(Effect.fail({ _tag: "SocketError", reason: "Open", cause } as unknown as Socket.SocketError))
        )
      }),
      (conn) => Effect.sync(() => conn.destroy())
    )
  )

/**
 * While calls are in flight: a `Ping` every `pingEveryMs`, and the connection dropped as `host_unresponsive` once the
 * host was silent for `silentAfterMs`. Stopped with the scope.
 */
const watch = (wire: Wire): Effect.Effect<void, never, Scope.Scope> => {
  const { connection } = wire
  const watchdog = setInterval(() => {
    if (connection.state !== "open" || connection.inFlight === 0) return
    const now = Date.now()
    if (now - silentSince(connection) > silentAfterMs) {
      // This process's own event loop may have been blocked, with the host's answer waiting unread: the check
      // phase comes after the socket was read, so only silence that outlasts that read counts.
      setImmediate(() => {
        if (Date.now() - silentSince(connection) > silentAfterMs) drop(connection, "host_unresponsive")
      })
      return
    }
    if (now - connection.lastSent >= pingEveryMs) {
      connection.lastSent = now
      connection.socket.write(wire.ping)
    }
  }, 250)
  watchdog.unref()
  return Effect.addFinalizer(() =>
    Effect.sync(() => {
      clearInterval(watchdog)
      clearTimeout(connection.idle)
    })
  )
}

type WriteResponse = (response: RpcMessage.FromServerEncoded) => Effect.Effect<void>

/** A frame from the host: it was heard from (a waiting `Ping` is answered), and its responses go to the client. */
const receive = (wire: Wire, writeResponse: WriteResponse, data: string | Uint8Array) => {
  const { connection } = wire
  connection.lastHeard = Date.now()
  const heard = connection.heard
  if (heard !== undefined) {
    connection.heard = undefined
    Deferred.unsafeDone(heard, Effect.void)
  }
  let responses: ReadonlyArray<unknown>
  try {
    responses = wire.parser.decode(data)
  } catch {
    drop(connection, "connection_lost")
    return
  }
  return Effect.forEach(
    responses as ReadonlyArray<RpcMessage.FromServerEncoded | Handshake.Answer>,
    (response) => {
      if (response._tag === "Rejected") {
        connection.rejected = response.reason
        drop(connection, "connection_lost")
        return Effect.void
      }
      return response._tag === "Pong" || response._tag === "Welcome" ? Effect.void : writeResponse(response)
    },
    { discard: true }
  )
}

/** The connection is over: what was in flight fails with why, and a connection that never opened sent nothing. */
const ended = (wire: Wire, writeResponse: WriteResponse, cause: NotSent | Lost) =>
  Effect.gen(function* () {
    const { connection } = wire
    const wasOpen = connection.state !== "connecting" || connection.lastHeard > 0
    connection.state = "dead"
    yield* Deferred.fail(connection.opened, cause._tag === "NotSent" ? cause : noHost(wire.path))
    yield* writeResponse({ _tag: "ClientProtocolError", error: clientError(wasOpen ? cause : noHost(wire.path)) })
  })

/** Reads the socket in a fiber of the current scope until it ends, then ends the connection. */
const run = (wire: Wire, socket: Socket.Socket, writeResponse: WriteResponse) =>
  socket
    .runRaw((data) => receive(wire, writeResponse, data), {
      onOpen: Effect.suspend(() => {
        wire.connection.state = "open"
        wire.connection.openedAt = Date.now()
        // C110: the first frame names the protocol and its version; the host's answer is the first it hears of it.
        return Effect.zipRight(
          Effect.ignore(wire.write(Handshake.hello(Handshake.versions[Handshake.versions.length - 1]!))),
          Deferred.succeed(wire.connection.opened, undefined)
        )
      })
    })
    .pipe(
      Effect.exit,
      Effect.flatMap(() =>
        ended(
          wire,
          writeResponse,
          wire.connection.state === "connecting" ? noHost(wire.path) : new Lost(wire.connection.lost)
        )
      ),
      Effect.forkScoped
    )

/** Writes a message of the client: a request only once `live` proved the host there, anything else as it comes. */
const send = (wire: Wire, request: RpcMessage.FromClientEncoded): Effect.Effect<void, RpcClientError> =>
  Effect.suspend(() => {
    const { connection } = wire
    if (connection.state === "dead") return Effect.fail(clientError(new NotSent(noHost(wire.path).error)))
    const encoded = Effect.try({
      try: () => wire.parser.encode(request) as string,
      // Over the frame bound (the client checks its requests' size before they get here).
      catch: () =>
        clientError(
          new NotSent(
            new InvalidInput({
              where: "arguments",
              path: "args",
              message: `the request is over the frame limit of ${wire.maxFrameBytes} bytes`,
              delivery: "not_sent"
            })
          )
        )
    })
    const out = Effect.flatMap(encoded, (data) =>
      wire.write(data).pipe(
        Effect.tap(() => {
          connection.lastSent = Date.now()
        }),
        Effect.mapError(() => clientError(new Lost("connection_lost")))
      )
    )
    if (request._tag !== "Request") return Effect.ignore(out)
    return Effect.zipRight(Effect.mapError(live(wire), clientError), out)
  })

/**
 * Opens a connection to the listener at `path` in the current scope, as the protocol of an `RpcClient`.
 *
 * @internal
 */
export const make = (
  path: string,
  maxFrameBytes: number
): Effect.Effect<
  { readonly connection: Connection; readonly protocol: RpcClient.Protocol["Type"] },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const netSocket = Net.createConnection({ path })
    const connection: Connection = {
      state: "connecting",
      inFlight: 0,
      lastHeard: 0,
      openedAt: 0,
      lastSent: Date.now(),
      lost: "connection_lost",
      rejected: undefined,
      socket: netSocket,
      opened: yield* Deferred.make<void, NotSent>(),
      heard: undefined,
      idle: undefined
    }
    const socket = yield* openSocket(netSocket)
    const parser = Frames.make("client", maxFrameBytes).unsafeMake()
    const wire: Wire = {
      connection,
      path,
      maxFrameBytes,
      parser,
      ping: parser.encode({ _tag: "Ping" }) as string,
      write: yield* socket.writer
    }
    yield* watch(wire)
    const protocol = yield* RpcClient.Protocol.make((writeResponse) =>
      Effect.as(run(wire, socket, writeResponse), {
        send: (request: RpcMessage.FromClientEncoded) => send(wire, request),
        supportsAck: true,
        supportsTransferables: false
      })
    )
    return { connection, protocol }
  })
