/**
 * The frames of a listener's socket: newline-delimited JSON, as `@effect/rpc`'s `ndjson`, with a bound on every frame
 * in both directions. A peer that sends a frame over the bound, bytes that are not JSON, or JSON that is not a message
 * of the protocol has its connection closed (the protocol closes on a `RpcSerializationError`); an answer over the
 * bound is replaced by `ResultTooLarge { bound: "frame" }` for its request, so the connection goes on.
 *
 * On a listener, a frame longer than `grantlessFrameBytes` must show a grant the listener accepts within its first
 * `grantlessFrameBytes` (C47), and what a connection holds of an unfinished frame is charged to the listener's budget
 * (C63, `budget.ts`).
 *
 * @internal
 */
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Data from "effect/Data"
import * as Budget from "./budget.js"

/** The default bound of one frame: 16 MiB. Bigger results go to a file (`saveTo`). @internal */
export const defaultMaxFrameBytes = 16 * 1024 * 1024

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
  readonly budget: Budget.Budget
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
const serverTags = new Set(["Chunk", "Exit", "Defect", "Pong", "ClientEnd", "ClientProtocolError"])

const isMessage = (tags: ReadonlySet<string>, u: unknown): boolean =>
  typeof u === "object" && u !== null && !Array.isArray(u) && clientOrServer(tags, (u as { _tag?: unknown })._tag)

const clientOrServer = (tags: ReadonlySet<string>, tag: unknown) => typeof tag === "string" && tags.has(tag)

const parse = (line: string, tags: ReadonlySet<string>): unknown => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new FrameError({ message: "a frame that is not JSON" })
  }
  if (!isMessage(tags, value)) throw new FrameError({ message: "a frame that is no message of the protocol" })
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

/** One connection's frame reader: splits the bytes on newlines and checks every frame's bounds as it grows. */
const decoder = (tags: ReadonlySet<string>, maxFrameBytes: number, guard: Guard | undefined) => {
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  // Whether the frame being read showed a grant in its head: it is checked once, when it passes the grantless bound.
  let admitted = false
  const check = (size: number, piece: Buffer) => {
    if (size > maxFrameBytes) throw tooLarge(size, maxFrameBytes)
    if (guard === undefined || admitted || size <= guard.grantlessBytes) return
    const head = Buffer.concat([...pending, piece]).toString("utf8", 0, guard.grantlessBytes)
    if (!guard.admits(head)) throw grantless(guard.grantlessBytes)
    admitted = true
  }
  const drop = () => {
    pending = []
    pendingBytes = 0
  }
  const decode = (data: string | Uint8Array, peer: Budget.Peer | undefined): Array<unknown> => {
    const bytes =
      typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    const items: Array<unknown> = []
    let start = 0
    // 0x0a never occurs inside a multi-byte UTF-8 sequence, so frames are split on bytes.
    let newline = bytes.indexOf(10)
    let end = bytes.length
    while (newline !== -1) {
      check(pendingBytes + newline - start, bytes.subarray(start, newline))
      const line =
        pending.length === 0
          ? bytes.toString("utf8", start, newline)
          : Buffer.concat([...pending, bytes.subarray(start, newline)]).toString("utf8")
      pending = []
      pendingBytes = 0
      admitted = false
      const message = parse(line, tags)
      items.push(message)
      start = newline + 1
      newline = bytes.indexOf(10, start)
      if (peer === undefined || (message as { _tag: string })._tag !== "Request") continue
      Budget.call(peer, 1)
      // A peer read no further (C64) has the rest of this chunk given back, so that no more of its requests than the
      // bound reach the host; it is read again, from there, when it resumes.
      if (peer.state !== "paused" || start === bytes.length) continue
      peer.unread(bytes.subarray(start))
      end = start
      break
    }
    if (start < end) {
      check(pendingBytes + end - start, bytes.subarray(start))
      pendingBytes += end - start
      // Kept, not copied: a socket's chunks are fresh memory each (no `onread` buffer), and a copy would double what
      // an unfinished frame costs until the next collection.
      pending.push(bytes.subarray(start))
    }
    if (guard !== undefined && peer !== undefined && !Budget.hold(guard.budget, peer, pendingBytes)) throw evicted()
    return items
  }
  return { decode, drop }
}

/**
 * One side's serialization: `side` says which messages it reads (a server reads the client's, and answers an
 * oversized `Exit` with `ResultTooLarge`); a listener passes its `guard`.
 *
 * @internal
 */
export const make = (
  side: "server" | "client",
  maxFrameBytes: number,
  guard?: Guard
): RpcSerialization.RpcSerialization["Type"] => {
  const tags = side === "server" ? clientTags : serverTags
  const encodeOne = (message: unknown): string => {
    const text = JSON.stringify(message)
    const bytes = byteLength(text, maxFrameBytes)
    if (bytes <= maxFrameBytes) return text + "\n"
    const tag = (message as { _tag?: unknown })._tag
    if (side === "server" && tag === "Exit") {
      return JSON.stringify(frameTooLarge((message as { requestId?: unknown }).requestId, bytes, maxFrameBytes)) + "\n"
    }
    // A chunk, or a client's own frame: the caller checks its requests before they get here.
    throw tooLarge(bytes, maxFrameBytes)
  }
  return RpcSerialization.RpcSerialization.of({
    contentType: "application/ndjson",
    includesFraming: true,
    unsafeMake: () => {
      const frames = decoder(tags, maxFrameBytes, guard)
      // The connection's account, known from its first bytes on (a server answers only what it has read).
      let peer: Budget.Peer | undefined
      const ended = (message: unknown) => {
        if (peer !== undefined && endsCall(message) && peer.calls > 0) Budget.call(peer, -1)
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
