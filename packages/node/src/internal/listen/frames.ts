/**
 * The frames of a listener's socket. The first is the peer's `Hello`, naming the protocol and a version this listener
 * speaks, or it is answered with a `Rejected` frame that says why and the connection closes (C110). The rest are
 * newline-delimited JSON, as `@effect/rpc`'s `ndjson`, with a bound on every frame
 * in both directions. A peer that sends a frame over the bound, bytes that are not JSON, or JSON that is not a message
 * of the protocol has its connection closed (the protocol closes on a `RpcSerializationError`); an answer over the
 * bound is replaced by `ResultTooLarge { bound: "frame" }` for its request, so the connection goes on.
 *
 * On a listener, a frame longer than `grantlessFrameBytes` must show a grant the listener accepts within its first
 * `grantlessFrameBytes` (C47), and what a connection holds of an unfinished frame is charged to the listener's budget
 * (C63).
 *
 * The budget is what a listener's peers may hold of the host's memory together (C63): the bytes of their unfinished
 * frames (held by each connection's decoder) and of the answers written to them but not yet taken by the kernel. Over the
 * budget, the peers holding the most are closed until the sum is under it again: with the sum over `maxBytes` and `n`
 * peers, the largest holds more than `maxBytes / n`, its share, so a peer within its share is never the one closed.
 *
 * A peer also stops being read while it leaves its answers unread or has too many calls unanswered (C64): what it
 * sends then waits in its own socket, not in the host.
 *
 * @internal
 */
import * as Socket from "@effect/platform/Socket"
import * as SocketCaller from "@mcp-worker/caller/SocketCaller"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Net from "node:net"
import * as Lines from "../wire/lines.js"

// C110: a peer's first frame is a `Hello`, answered before anything of the peer reaches the protocol's decoder.

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

// The frames after it.

/** The default bound of one frame, the caller's as the listener's (one fact of the wire). @internal */
export const defaultMaxFrameBytes = SocketCaller.defaultMaxFrameBytes

/**
 * What a frame may hold before it has shown a grant: 4 KiB, where a request's grant comes within its first 300 bytes
 * (C47). A peer that has no grant can hold no more than this of the host's memory.
 *
 * @internal
 */
export const grantlessFrameBytes = 4 * 1024

/**
 * What a listener adds to its side's frames: `admits` says whether the head of a frame shows a grant it accepts; a
 * frame over `grantlessBytes` is read on only if it does.
 *
 * @internal
 */
export interface Guard {
  readonly grantlessBytes: number
  readonly admits: (head: string) => boolean
  readonly budget: Budget
}

/**
 * Why the bytes of a peer cannot be read. Tagged as the protocol's own serialization error, which is what makes the
 * socket protocol close the connection (with the message as its reason) instead of answering it.
 *
 * @internal
 */
export class FrameError extends Data.TaggedError("RpcSerializationError")<{ readonly message: string }> {}

/** The messages a peer may send; anything else is not a frame of this protocol. */
const clientTags = new Set(["Request", "Ack", "Interrupt", "Ping", "Eof"])
const isMessage = (u: unknown): boolean => {
  const tag = typeof u === "object" && u !== null && !Array.isArray(u) ? (u as { _tag?: unknown })._tag : undefined
  return typeof tag === "string" && clientTags.has(tag)
}

const parse = (line: string): unknown => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new FrameError({ message: "a frame that is not JSON" })
  }
  if (!isMessage(value)) throw new FrameError({ message: "a frame that is no message of the protocol" })
  return value
}

const tooLarge = (bytes: number, max: number) =>
  new FrameError({ message: `a frame of more than ${max} bytes (${bytes} so far)` })

const grantless = (max: number) =>
  new FrameError({ message: `a frame of more than ${max} bytes that shows no valid grant in its first ${max} bytes` })

const evicted = () =>
  new FrameError({ message: "the listener's buffers are over their budget and this connection held the most" })

/** Whether an encoded answer ends a request: what the listener counts a peer's calls down by (C64). */
const endsCall = (message: unknown): boolean => {
  const tag = (message as { _tag?: unknown })._tag
  return tag === "Exit" || tag === "Defect"
}

/** The encoded `Exit` of a request whose answer passed the bound: the caller's side fills in the worker id. */
const frameTooLarge = (requestId: unknown, bytes: number, max: number) => ({
  _tag: "Exit",
  requestId,
  exit: {
    _tag: "Failure",
    cause: {
      _tag: "Fail",
      error: {
        _tag: "ResultTooLarge",
        workerId: "",
        requestId: "",
        bytes,
        limit: max,
        delivery: "unknown",
        bound: "frame"
      }
    }
  }
})

const byteLength = (text: string, max: number): number =>
  // A string of at most max/3 UTF-16 units is at most max bytes: only longer ones are measured.
  text.length * 3 <= max ? text.length : Buffer.byteLength(text)

/** The first `bytes` of a frame, as text: where a grant must show (C47). */
const headOf = (held: ReadonlyArray<Buffer>, bytes: number): string => Buffer.concat(held, bytes).toString("utf8")

/** One connection's frame reader: splits the bytes on newlines and checks every frame's bounds as it grows. */
const decoder = (maxFrameBytes: number, guard: Guard | undefined) => {
  // What the chunk being decoded yields, and whose it is.
  let items: Array<unknown> = []
  let peer: Peer | undefined
  const lines = Lines.make({
    decode: Lines.text,
    maxLineBytes: guard === undefined ? maxFrameBytes : Math.min(guard.grantlessBytes, maxFrameBytes),
    onLine: (line) => {
      const message = parse(line)
      items.push(message)
      if (peer === undefined || (message as { _tag: string })._tag !== "Request") return
      call(peer, 1)
      // A peer read no further (C64) has the rest of this chunk given back, so that no more of its requests than the
      // bound reach the host; it is read again, from there, when it resumes.
      return peer.state !== "paused"
    },
    // Past the grantless bound, a frame is read on, up to the frame bound, only if its head shows a grant (C47).
    onOverflow: (held, bytes) => {
      if (bytes > maxFrameBytes || guard === undefined) throw tooLarge(bytes, maxFrameBytes)
      if (!guard.admits(headOf(held, guard.grantlessBytes))) throw grantless(guard.grantlessBytes)
      return maxFrameBytes
    }
  })
  const decode = (data: string | Uint8Array, reader: Peer | undefined): Array<unknown> => {
    // Kept, not copied: a socket's chunks are fresh memory each (no `onread` buffer), and a copy would double what an
    // unfinished frame costs until the next collection.
    const bytes =
      typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    items = []
    peer = reader
    const unread = lines.push(bytes)
    if (unread !== undefined) reader?.unread(unread)
    if (guard !== undefined && reader !== undefined && !hold(guard.budget, reader, lines.bufferedBytes)) {
      throw evicted()
    }
    return items
  }
  return { decode, drop: () => lines.clear() }
}

/**
 * The listener's serialization: it reads a caller's messages, and answers an oversized `Exit` with `ResultTooLarge`;
 * `guard` adds the grant and budget checks (C47, C63). The caller's side is `@mcp-worker/caller`'s socket plane.
 *
 * @internal
 */
export const make = (maxFrameBytes: number, guard?: Guard): RpcSerialization.RpcSerialization["Type"] => {
  const encodeOne = (message: unknown): string => {
    const text = JSON.stringify(message)
    const bytes = byteLength(text, maxFrameBytes)
    if (bytes <= maxFrameBytes) return text + "\n"
    const tag = (message as { _tag?: unknown })._tag
    if (tag === "Exit") {
      return JSON.stringify(frameTooLarge((message as { requestId?: unknown }).requestId, bytes, maxFrameBytes)) + "\n"
    }
    // A chunk: the listener checks what it streams before it gets here.
    throw tooLarge(bytes, maxFrameBytes)
  }
  return RpcSerialization.RpcSerialization.of({
    contentType: "application/ndjson",
    includesFraming: true,
    unsafeMake: () => {
      const frames = decoder(maxFrameBytes, guard)
      // The connection's account, known from its first bytes on (a server answers only what it has read).
      let peer: Peer | undefined
      const ended = (message: unknown) => {
        if (peer !== undefined && endsCall(message) && peer.calls > 0) call(peer, -1)
      }
      return {
        decode: (data) => {
          if (peer === undefined && guard?.budget.reading !== undefined) {
            peer = guard.budget.reading
            // A connection closed (by the budget, or its end) lets go of its unfinished frame at once.
            peer.release = frames.drop
          }
          return frames.decode(data, peer)
        },
        encode: (message) => {
          if (!Array.isArray(message)) {
            ended(message)
            return encodeOne(message)
          }
          if (message.length === 0) return undefined
          let data = ""
          for (const one of message) {
            ended(one)
            data += encodeOne(one)
          }
          return data
        }
      }
    }
  })
}

/** The default budget: 256 MiB for every peer together, whatever their number (C63). @internal */
export const defaultMaxBufferedBytes = 256 * 1024 * 1024

/**
 * A peer is read no further while this many of its calls are unanswered (C64): what it has waiting in the host is
 * what another peer's request may queue behind.
 *
 * @internal
 */
export const maxCallsPerPeer = 64

/** ... or while this many bytes of its answers wait to be written (C64). @internal */
export const maxQueuedPerPeer = 1024 * 1024

/**
 * A connection with a request refused at once is read no further for this long (C86): what it sends meanwhile waits
 * in its own socket, so that asking a busy worker again and again takes a bounded share of the host.
 *
 * @internal
 */
export const restAfterRefusalMs = 10

/** One connection's account. @internal */
export interface Peer {
  /** Bytes of its unfinished frame. */
  held: number
  /** Bytes of answers handed to its socket, not yet written. */
  queued: number
  /** Requests read from it, not yet answered. */
  calls: number
  state: "reading" | "paused" | "closed"
  /** While set, it is read no further: a request of it was refused at once lately (C86). */
  resting: ReturnType<typeof setTimeout> | undefined
  /** When its rest ends, on `performance.now()`'s clock. */
  restsUntil: number
  /** Lets go of its unfinished frame (set by its decoder). */
  release: () => void
  readonly pause: () => void
  readonly resume: () => void
  readonly close: () => void
  /** Gives back bytes read but not decoded: they are read again when it resumes. */
  readonly unread: (bytes: Uint8Array) => void
}

/** A listener's budget, shared by its connections. @internal */
export interface Budget {
  readonly maxBytes: number
  /** The sum of every open peer's `held` and `queued`. */
  used: number
  readonly peers: Set<Peer>
  /**
   * The peer whose bytes are being decoded: the protocol makes one decoder per connection with no way to name it, and
   * calls it synchronously from that connection's data callback, which sets this around the call.
   */
  reading: Peer | undefined
}

/** @internal */
export const makeBudget = (maxBytes: number): Budget => ({ maxBytes, used: 0, peers: new Set(), reading: undefined })

/** A new connection's account. @internal */
export const join = (budget: Budget, io: Pick<Peer, "pause" | "resume" | "close" | "unread">): Peer => {
  const peer: Peer = {
    held: 0,
    queued: 0,
    calls: 0,
    state: "reading",
    resting: undefined,
    restsUntil: 0,
    release: () => {},
    ...io
  }
  budget.peers.add(peer)
  return peer
}

/** A connection ended: what it held is released. @internal */
export const leave = (budget: Budget, peer: Peer): void => {
  if (!budget.peers.delete(peer)) return
  budget.used -= peer.held + peer.queued
  peer.state = "closed"
  clearTimeout(peer.resting)
  peer.release()
}

const evict = (budget: Budget): void => {
  while (budget.used > budget.maxBytes && budget.peers.size > 0) {
    let largest: Peer | undefined
    for (const peer of budget.peers) {
      if (largest === undefined || peer.held + peer.queued > largest.held + largest.queued) largest = peer
    }
    leave(budget, largest!)
    largest!.close()
  }
}

/** Pauses or resumes reading `peer` by what it has unanswered and unread. */
const flow = (peer: Peer): void => {
  if (peer.state === "closed") return
  const full = peer.calls >= maxCallsPerPeer || peer.queued > maxQueuedPerPeer || peer.resting !== undefined
  if (full && peer.state === "reading") {
    peer.state = "paused"
    peer.pause()
  } else if (!full && peer.state === "paused") {
    peer.state = "reading"
    peer.resume()
  }
}

/** `peer` now holds `bytes` of an unfinished frame; `false` when that closed it (past its share, over budget). @internal */
export const hold = (budget: Budget, peer: Peer, bytes: number): boolean => {
  if (peer.state === "closed") return false
  budget.used += bytes - peer.held
  peer.held = bytes
  evict(budget)
  return budget.peers.has(peer)
}

/** `bytes` of answers handed to `peer`'s socket (positive) or written by it (negative). @internal */
export const queue = (budget: Budget, peer: Peer, bytes: number): void => {
  if (peer.state === "closed") return
  budget.used += bytes
  peer.queued += bytes
  evict(budget)
  flow(peer)
}

/** `delta` requests of `peer` read (positive) or answered (negative). @internal */
export const call = (peer: Peer, delta: number): void => {
  peer.calls += delta
  flow(peer)
}

const restFor = (peer: Peer, ms: number): void => {
  peer.resting = setTimeout(wake, ms, peer)
  peer.resting.unref()
}

// A timer counts from the loop's cached time, which may be behind: it rests on until the full time has passed.
const wake = (peer: Peer): void => {
  const left = peer.restsUntil - performance.now()
  if (left > 0) return restFor(peer, Math.ceil(left))
  peer.resting = undefined
  flow(peer)
}

/** `peer` is read no further for `ms` (C86), unless it rests already. @internal */
export const rest = (peer: Peer, ms: number): void => {
  if (peer.state === "closed" || peer.resting !== undefined) return
  peer.restsUntil = performance.now() + ms
  restFor(peer, ms)
  flow(peer)
}

/**
 * A connection's socket that tells the budget what it holds: the bytes being decoded are its (`Budget.reading`), and
 * an answer is queued from its hand-over to the socket until the kernel took it (C63).
 *
 * @internal
 */
export const accounted = (socket: Socket.Socket, budget: Budget, peer: Peer): Socket.Socket => {
  const read: Socket.Socket["runRaw"] = (onData, options) =>
    socket.runRaw((data) => {
      budget.reading = peer
      try {
        return onData(data)
      } finally {
        budget.reading = undefined
      }
    }, options)
  return {
    ...socket,
    run: read as Socket.Socket["run"],
    runRaw: read,
    writer: Effect.map(
      socket.writer,
      (write) => (chunk) =>
        Effect.suspend(() => {
          if (Socket.isCloseEvent(chunk)) return write(chunk)
          const bytes = typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength
          queue(budget, peer, bytes)
          return Effect.ensuring(
            write(chunk),
            Effect.sync(() => queue(budget, peer, -bytes))
          )
        })
    )
  }
}
