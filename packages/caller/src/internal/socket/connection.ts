/**
 * One caller's connection to a listener (C46, C110): the socket protocol's frames and constants as a caller writes and
 * reads them, the connection's record and its delivery rules, and the Unix socket under it. @internal
 */
// The package's only `node:` import: Node, Deno 2 and Bun 1 all provide `node:net`.
import * as Net from "node:net"
import type { Envelope } from "../envelope.js"

// The socket protocol's frames, caller side

/** C110 @internal */
export const protocol = "mcp-worker"
/** @internal */
export const version = 1

/** @internal */
export const hello = JSON.stringify({ _tag: "Hello", protocol, version }) + "\n"
/** @internal */
export const ping = '{"_tag":"Ping"}\n'

/** C46: heard from within this, a request needs no `Ping` first. @internal */
export const staleAfterMs = 1_500
/** Past it, the request waiting on a `Ping` or `Hello` is not sent. @internal */
export const ackWithinMs = 750
/** @internal */
export const pingEveryMs = 1_000
/** C46 @internal */
export const silentAfterMs = 3_000
/** Below a listener's idle bound (≥ 2 s), so the caller closes first. @internal */
export const idleAfterMs = 1_000
/** As the listener's. @internal */
export const defaultMaxFrameBytes = 16 * 1024 * 1024

/** C84: the trace only when it carries more than ids. @internal */
export interface RequestPayload extends Omit<Envelope, "method" | "progress" | "deadline" | "spill"> {
  readonly id: string
  readonly deadline?: number | undefined
  readonly spill?: false | undefined
}

/** @internal */
export type FromHost =
  | { readonly _tag: "Welcome"; readonly protocol: string; readonly version: number }
  | {
      readonly _tag: "Rejected"
      readonly protocol: string
      readonly versions: ReadonlyArray<number>
      readonly reason: string
    }
  | { readonly _tag: "Pong" }
  | { readonly _tag: "Chunk"; readonly requestId: string; readonly values: ReadonlyArray<unknown> }
  | { readonly _tag: "Exit"; readonly requestId: string; readonly exit: ExitEncoded }
  | { readonly _tag: "Defect"; readonly defect: unknown }
  | { readonly _tag: "ClientEnd" }

/** As `effect/Schema`'s `Exit` encodes it. @internal */
export type ExitEncoded =
  { readonly _tag: "Success"; readonly value?: unknown } | { readonly _tag: "Failure"; readonly cause: CauseEncoded }

/** As `effect/Schema`'s `Cause` encodes it. @internal */
export type CauseEncoded =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown }
  | { readonly _tag: "Interrupt"; readonly fiberId: unknown }
  | { readonly _tag: "Sequential" | "Parallel"; readonly left: CauseEncoded; readonly right: CauseEncoded }

/** @internal */
export type Ending =
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown }
  | { readonly _tag: "Interrupt" }

const causes = (cause: CauseEncoded): Array<CauseEncoded> =>
  cause._tag === "Sequential" || cause._tag === "Parallel" ? [...causes(cause.left), ...causes(cause.right)] : [cause]

/** A failure wins, as `Cause.failureOption` reads it. @internal */
export const endingOf = (cause: CauseEncoded): Ending => {
  const all = causes(cause)
  const fail = all.find((one) => one._tag === "Fail")
  if (fail !== undefined) return { _tag: "Fail", error: (fail as { error: unknown }).error }
  const die = all.find((one) => one._tag === "Die")
  if (die !== undefined) return { _tag: "Die", defect: (die as { defect: unknown }).defect }
  return { _tag: "Interrupt" }
}

/** Without encoding it. @internal */
export const utf8Length = (text: string): number => {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2
      i++
    } else bytes += 2
  }
  return bytes
}

/** `undefined`: over `maxBytes`; the host answers `ResultTooLarge` instead. @internal */
export const lines = (maxBytes: number) => {
  const decoder = new TextDecoder()
  let held: Array<Uint8Array> = []
  let heldBytes = 0
  return (bytes: Uint8Array): Array<string> | undefined => {
    const out: Array<string> = []
    let from = 0
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, from)) {
      held.push(bytes.subarray(from, at))
      out.push(held.length === 1 ? decoder.decode(held[0]) : decoder.decode(concat(held, heldBytes + at - from)))
      held = []
      heldBytes = 0
      from = at + 1
    }
    if (from < bytes.length) {
      held.push(bytes.subarray(from))
      heldBytes += bytes.length - from
      if (heldBytes > maxBytes) return undefined
    }
    return out
  }
}

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  const all = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.length
  }
  return all
}

// The platform's socket

/** @internal */
export interface Transport {
  /** `false` once the socket can take nothing more. */
  readonly write: (text: string) => boolean
  readonly end: () => void
  readonly destroy: () => void
  readonly hold: (held: boolean) => void
}

/** @internal */
export interface Handlers {
  readonly onOpen: () => void
  readonly onData: (bytes: Uint8Array) => void
  readonly onClose: () => void
}

/** @internal */
export const connect = (path: string, handlers: Handlers): Transport => {
  const socket = Net.createConnection({ path })
  socket.on("connect", handlers.onOpen)
  socket.on("data", handlers.onData)
  // Every failure ends in `close`, which says what became of the connection.
  socket.on("error", () => {})
  socket.once("close", handlers.onClose)
  return {
    write: (text) => {
      if (socket.destroyed || !socket.writable) return false
      socket.write(text)
      return true
    },
    end: () => void socket.end(),
    destroy: () => void socket.destroy(),
    hold: (held) => void (held ? socket.ref() : socket.unref())
  }
}

// The connection

/** Once anything may have been read of the connection. @internal */
export type Lost = "connection_lost" | "host_unresponsive"

/** @internal */
export type NotSentReason =
  | { readonly _tag: "NoHost" }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Unresponsive" }

/** @internal */
export interface Waiter {
  readonly onChunk: (values: ReadonlyArray<unknown>) => void
  readonly onExit: (exit: ExitEncoded) => void
  readonly onLost: (lost: Lost) => void
}

/** @internal */
export interface Connection {
  state: "connecting" | "open" | "dead"
  /** C110 */
  rejected: string | undefined
  lost: Lost
  /** Above 0: keeps the process alive and is pinged. */
  inFlight: number
  /** `0` until the host answered the `Hello`. */
  lastHeard: number
  openedAt: number
  lastSent: number
  probing: boolean
  readonly heard: Set<() => void>
  readonly waiters: Map<string, Waiter>
  readonly transport: Transport
  readonly maxFrameBytes: number
  watchdog: ReturnType<typeof setInterval> | undefined
  idle: ReturnType<typeof setTimeout> | undefined
}

const wake = (connection: Connection) => {
  const heard = [...connection.heard]
  connection.heard.clear()
  for (const resume of heard) resume()
}

/** @internal */
export const drop = (connection: Connection, lost: Lost): void => {
  if (connection.state === "dead") return
  connection.lost = lost
  connection.transport.destroy()
  ended(connection)
}

const ended = (connection: Connection) => {
  if (connection.state === "dead") return
  connection.state = "dead"
  clearInterval(connection.watchdog)
  clearTimeout(connection.idle)
  wake(connection)
  const waiters = [...connection.waiters.values()]
  connection.waiters.clear()
  for (const waiter of waiters) waiter.onLost(connection.lost)
}

const receive = (connection: Connection, line: string) => {
  let frame: FromHost
  try {
    frame = JSON.parse(line) as FromHost
  } catch {
    return drop(connection, "connection_lost")
  }
  switch (frame._tag) {
    case "Rejected":
      connection.rejected = frame.reason
      return drop(connection, "connection_lost")
    case "Chunk":
      return connection.waiters.get(frame.requestId)?.onChunk(frame.values)
    case "Exit": {
      const waiter = connection.waiters.get(frame.requestId)
      connection.waiters.delete(frame.requestId)
      return waiter?.onExit(frame.exit)
    }
    case "Defect": {
      // A frame the host could not read ends every call on the connection.
      const waiters = [...connection.waiters.values()]
      connection.waiters.clear()
      for (const waiter of waiters) waiter.onExit({ _tag: "Failure", cause: { _tag: "Die", defect: frame.defect } })
      return
    }
  }
}

// After pending socket reads where `setImmediate` exists.
const afterReads: (f: () => void) => void = (f) =>
  typeof globalThis.setImmediate === "function" ? void globalThis.setImmediate(f) : void setTimeout(f, 0)

const watch = (connection: Connection) => {
  connection.watchdog = setInterval(() => {
    if (connection.state !== "open" || connection.inFlight === 0) return
    const now = Date.now()
    const since = Math.max(connection.lastHeard, connection.openedAt)
    if (now - since > silentAfterMs) {
      // Our loop may have blocked with the answer unread.
      return void afterReads(() => {
        if (Date.now() - Math.max(connection.lastHeard, connection.openedAt) > silentAfterMs) {
          drop(connection, "host_unresponsive")
        }
      })
    }
    if (now - connection.lastSent >= pingEveryMs) write(connection, ping)
  }, 250)
  const timer = connection.watchdog as { unref?: () => void }
  timer.unref?.()
}

/** @internal */
export const open = (path: string, maxFrameBytes: number): Connection => {
  const split = lines(maxFrameBytes)
  const connection: Connection = {
    state: "connecting",
    rejected: undefined,
    lost: "connection_lost",
    inFlight: 0,
    lastHeard: 0,
    openedAt: 0,
    lastSent: Date.now(),
    probing: true,
    heard: new Set(),
    waiters: new Map(),
    transport: undefined as unknown as Transport,
    maxFrameBytes,
    watchdog: undefined,
    idle: undefined
  }
  ;(connection as { transport: Transport }).transport = connect(path, {
    onOpen: () => {
      connection.state = "open"
      connection.openedAt = Date.now()
      write(connection, hello)
      watch(connection)
      wake(connection)
    },
    onData: (bytes) => {
      if (connection.state === "dead") return
      connection.lastHeard = Date.now()
      connection.probing = false
      wake(connection)
      const frames = split(bytes)
      if (frames === undefined) return drop(connection, "connection_lost")
      for (const frame of frames) receive(connection, frame)
    },
    onClose: () => ended(connection)
  })
  return connection
}

/** `false` when the connection can take nothing more. @internal */
export const write = (connection: Connection, frame: string): boolean => {
  if (connection.state !== "open" || !connection.transport.write(frame)) return false
  connection.lastSent = Date.now()
  return true
}

/** Only a connection in use keeps the process alive. @internal */
export const use = (connection: Connection, delta: 1 | -1): void => {
  connection.inFlight += delta
  if (connection.inFlight === 1 && delta === 1) {
    clearTimeout(connection.idle)
    connection.transport.hold(true)
  }
  if (connection.inFlight === 0) {
    connection.transport.hold(false)
    connection.idle = setTimeout(() => {
      if (connection.inFlight > 0 || connection.state === "dead") return
      // Nothing was in flight, so nothing is lost.
      connection.transport.end()
      ended(connection)
    }, idleAfterMs)
    ;(connection.idle as { unref?: () => void }).unref?.()
  }
}

const nextHeard = (connection: Connection, within: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => {
      connection.heard.delete(heard)
      resolve(false)
    }, within)
    const heard = () => {
      clearTimeout(timer)
      resolve(true)
    }
    connection.heard.add(heard)
  })

const openedOrDead = (connection: Connection): Promise<void> =>
  connection.state !== "connecting"
    ? Promise.resolve()
    : new Promise((resolve) => {
        const check = () => (connection.state === "connecting" ? connection.heard.add(check) : resolve())
        check()
      })

/** C46: `undefined` when the request may be written. @internal */
export const live = async (connection: Connection): Promise<NotSentReason | undefined> => {
  await openedOrDead(connection)
  if (connection.state === "dead") return notSentOf(connection)
  if (Date.now() - connection.lastHeard <= staleAfterMs) return undefined
  if (!connection.probing) {
    connection.probing = true
    write(connection, ping)
  }
  const answered = await nextHeard(connection, ackWithinMs)
  if (isDead(connection)) return notSentOf(connection)
  if (answered) return undefined
  // None of its requests was written.
  drop(connection, "host_unresponsive")
  return { _tag: "Unresponsive" }
}

// Read anew after an await: the state may have moved meanwhile.
const isDead = (connection: Connection): boolean => connection.state === "dead"

const notSentOf = (connection: Connection): NotSentReason =>
  connection.rejected !== undefined ? { _tag: "Refused", reason: connection.rejected } : { _tag: "NoHost" }
