/**
 * C110, C47, C63, C64
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

// C110

/** @internal */
export const protocol = SocketCaller.protocol

/** @internal */
export const versions: ReadonlyArray<number> = [SocketCaller.version]

/** @internal */
export const hello = (version: number): string => JSON.stringify({ _tag: "Hello", protocol, version }) + "\n"

/** @internal */
export const welcome = (version: number): string => JSON.stringify({ _tag: "Welcome", protocol, version }) + "\n"

/** @internal */
export const rejected = (reason: string): string =>
  JSON.stringify({ _tag: "Rejected", protocol, versions, reason }) + "\n"

/** C47 @internal */
export const maxHelloBytes = 256

/** @internal */
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

/** @internal */
export const guarded = (socket: Socket.Socket, conn: Net.Socket): Socket.Socket => {
  let held: Uint8Array = new Uint8Array(0)
  let state: "waiting" | "open" | "refused" = "waiting"
  const refuse = (reason: string) => {
    state = "refused"
    conn.end(rejected(reason))
    // A peer that does not read its refusal holds nothing open.
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

/** @internal */
export const defaultMaxFrameBytes = SocketCaller.defaultMaxFrameBytes

/** C47: a grant comes within a request's first 300 bytes. @internal */
export const grantlessFrameBytes = 4 * 1024

/** @internal */
export interface Guard {
  readonly grantlessBytes: number
  readonly admits: (head: string) => boolean
  readonly budget: Budget
}

/** Closes the connection instead of answering. @internal */
export class FrameError extends Data.TaggedError("RpcSerializationError")<{ readonly message: string }> {}

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

// C64
const endsCall = (message: unknown): boolean => {
  const tag = (message as { _tag?: unknown })._tag
  return tag === "Exit" || tag === "Defect"
}

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
  // max/3 UTF-16 units are at most max bytes.
  text.length * 3 <= max ? text.length : Buffer.byteLength(text)

const headOf = (held: ReadonlyArray<Buffer>, bytes: number): string => Buffer.concat(held, bytes).toString("utf8")

const decoder = (maxFrameBytes: number, guard: Guard | undefined) => {
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
      // C64: given back, read again on resume.
      return peer.state !== "paused"
    },
    // C47
    onOverflow: (held, bytes) => {
      if (bytes > maxFrameBytes || guard === undefined) throw tooLarge(bytes, maxFrameBytes)
      if (!guard.admits(headOf(held, guard.grantlessBytes))) throw grantless(guard.grantlessBytes)
      return maxFrameBytes
    }
  })
  const decode = (data: string | Uint8Array, reader: Peer | undefined): Array<unknown> => {
    // A copy would double an unfinished frame's cost.
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

/** @internal */
export const make = (maxFrameBytes: number, guard?: Guard): RpcSerialization.RpcSerialization["Type"] => {
  const encodeOne = (message: unknown): string => {
    const text = JSON.stringify(message)
    const bytes = byteLength(text, maxFrameBytes)
    if (bytes <= maxFrameBytes) return text + "\n"
    const tag = (message as { _tag?: unknown })._tag
    if (tag === "Exit") {
      return JSON.stringify(frameTooLarge((message as { requestId?: unknown }).requestId, bytes, maxFrameBytes)) + "\n"
    }
    throw tooLarge(bytes, maxFrameBytes)
  }
  return RpcSerialization.RpcSerialization.of({
    contentType: "application/ndjson",
    includesFraming: true,
    unsafeMake: () => {
      const frames = decoder(maxFrameBytes, guard)
      let peer: Peer | undefined
      const ended = (message: unknown) => {
        if (peer !== undefined && endsCall(message) && peer.calls > 0) call(peer, -1)
      }
      return {
        decode: (data) => {
          if (peer === undefined && guard?.budget.reading !== undefined) {
            peer = guard.budget.reading
            // C63
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

/** C63 @internal */
export const defaultMaxBufferedBytes = 256 * 1024 * 1024

/** C64 @internal */
export const maxCallsPerPeer = 64

/** C64 @internal */
export const maxQueuedPerPeer = 1024 * 1024

/** C86 @internal */
export const restAfterRefusalMs = 10

/** @internal */
export interface Peer {
  held: number
  queued: number
  calls: number
  state: "reading" | "paused" | "closed"
  resting: ReturnType<typeof setTimeout> | undefined
  restsUntil: number
  release: () => void
  readonly pause: () => void
  readonly resume: () => void
  readonly close: () => void
  readonly unread: (bytes: Uint8Array) => void
}

/** @internal */
export interface Budget {
  readonly maxBytes: number
  used: number
  readonly peers: Set<Peer>
  // The protocol names no connection to its decoder.
  reading: Peer | undefined
}

/** @internal */
export const makeBudget = (maxBytes: number): Budget => ({ maxBytes, used: 0, peers: new Set(), reading: undefined })

/** @internal */
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

/** @internal */
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

/** C63: `false` when it closed `peer`. @internal */
export const hold = (budget: Budget, peer: Peer, bytes: number): boolean => {
  if (peer.state === "closed") return false
  budget.used += bytes - peer.held
  peer.held = bytes
  evict(budget)
  return budget.peers.has(peer)
}

/** @internal */
export const queue = (budget: Budget, peer: Peer, bytes: number): void => {
  if (peer.state === "closed") return
  budget.used += bytes
  peer.queued += bytes
  evict(budget)
  flow(peer)
}

/** @internal */
export const call = (peer: Peer, delta: number): void => {
  peer.calls += delta
  flow(peer)
}

const restFor = (peer: Peer, ms: number): void => {
  peer.resting = setTimeout(wake, ms, peer)
  peer.resting.unref()
}

// The loop's cached time may be behind the full rest.
const wake = (peer: Peer): void => {
  const left = peer.restsUntil - performance.now()
  if (left > 0) return restFor(peer, Math.ceil(left))
  peer.resting = undefined
  flow(peer)
}

/** C86 @internal */
export const rest = (peer: Peer, ms: number): void => {
  if (peer.state === "closed" || peer.resting !== undefined) return
  peer.restsUntil = performance.now() + ms
  restFor(peer, ms)
  flow(peer)
}

/** C63 @internal */
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
