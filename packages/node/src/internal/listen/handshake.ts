/**
 * The listener's handshake (C110): a peer's first frame names the protocol and the version it speaks, and is answered
 * before anything of the peer reaches the protocol's decoder. A first frame that is anything else, or a version this
 * listener does not speak, is answered with a `Rejected` frame that says why, and the connection is closed.
 *
 * @internal
 */
import type * as Socket from "@effect/platform/Socket"
import * as SocketCaller from "@mcp-worker/caller/SocketCaller"
import type * as Net from "node:net"

/** The protocol's name in the handshake: the caller's (one fact of the wire). @internal */
export const protocol = SocketCaller.protocol

/** The versions of the socket protocol this listener speaks (docs/wire.md): the caller's one. @internal */
export const versions: ReadonlyArray<number> = [SocketCaller.version]

/** The first frame of a peer that speaks `version`. @internal */
export const hello = (version: number): string => JSON.stringify({ _tag: "Hello", protocol, version }) + "\n"

/** The listener's answer to a `Hello` of a version it speaks. @internal */
export const welcome = (version: number): string => JSON.stringify({ _tag: "Welcome", protocol, version }) + "\n"

/** The listener's answer to any other first frame; the connection closes after it. @internal */
export const rejected = (reason: string): string =>
  JSON.stringify({ _tag: "Rejected", protocol, versions, reason }) + "\n"

/** What a `Hello` may take: well past its ~50 bytes, far below the grantless bound (C47). @internal */
export const maxHelloBytes = 256

/** The answer to a peer's first frame: a version spoken, or why not. @internal */
export const check = (line: string): { readonly version: number } | { readonly reason: string } => {
  let frame: unknown
  try {
    frame = JSON.parse(line)
  } catch {
    return { reason: "the first frame is not JSON: it must be a Hello" }
  }
  const { _tag, protocol: named, version } = (frame ?? {}) as { _tag?: unknown; protocol?: unknown; version?: unknown }
  if (_tag !== "Hello") {
    return { reason: `the first frame must be a Hello naming protocol "${protocol}" and its version` }
  }
  if (named !== protocol) return { reason: `this listener speaks protocol "${protocol}", not ${JSON.stringify(named)}` }
  if (typeof version !== "number" || !versions.includes(version)) {
    return {
      reason: `this listener speaks versions ${versions.join(", ")} of "${protocol}", not ${JSON.stringify(version)}`
    }
  }
  return { version }
}

const newline = 10

const bytesOf = (data: string | Uint8Array): Uint8Array => (typeof data === "string" ? Buffer.from(data) : data)

/**
 * `socket` with the handshake ahead of its reader: the first frame is held here (at most `maxHelloBytes`), answered on
 * `conn`, and only what follows it is handed on. A peer refused is answered, and its connection ended.
 *
 * @internal
 */
export const guarded = (socket: Socket.Socket, conn: Net.Socket): Socket.Socket => {
  let held: Uint8Array = new Uint8Array(0)
  let state: "waiting" | "open" | "refused" = "waiting"
  const refuse = (reason: string) => {
    state = "refused"
    conn.end(rejected(reason))
    // A peer that does not read its refusal does not hold the connection open.
    setTimeout(() => conn.destroy(), 1_000).unref()
  }
  const read: Socket.Socket["runRaw"] = (onData, options) =>
    socket.runRaw((data) => {
      if (state === "open") return onData(data)
      if (state === "refused") return
      const bytes = bytesOf(data)
      const joined = held.length === 0 ? bytes : Buffer.concat([held, bytes])
      const end = joined.indexOf(newline)
      if (end === -1) {
        if (joined.length > maxHelloBytes)
          return refuse(`the first frame must be a Hello of at most ${maxHelloBytes} bytes`)
        held = joined
        return
      }
      held = new Uint8Array(0)
      const answer = check(Buffer.from(joined.subarray(0, end)).toString("utf8"))
      if ("reason" in answer) return refuse(answer.reason)
      state = "open"
      conn.write(welcome(answer.version))
      const rest = joined.subarray(end + 1)
      return rest.length === 0 ? undefined : onData(rest)
    }, options)
  return { ...socket, run: read as Socket.Socket["run"], runRaw: read }
}
