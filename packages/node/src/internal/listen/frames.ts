/**
 * The frames of a listener's socket: newline-delimited JSON, as `@effect/rpc`'s `ndjson`, with a bound on every frame
 * in both directions. A peer that sends a frame over the bound, bytes that are not JSON, or JSON that is not a message
 * of the protocol has its connection closed (the protocol closes on a `RpcSerializationError`); an answer over the
 * bound is replaced by `ResultTooLarge { bound: "frame" }` for its request, so the connection goes on.
 *
 * @internal
 */
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as Data from "effect/Data"

/** The default bound of one frame: 16 MiB. Bigger results go to a file (`saveTo`). @internal */
export const defaultMaxFrameBytes = 16 * 1024 * 1024

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

/**
 * One side's serialization: `side` says which messages it reads (a server reads the client's, and answers an
 * oversized `Exit` with `ResultTooLarge`).
 *
 * @internal
 */
export const make = (side: "server" | "client", maxFrameBytes: number): RpcSerialization.RpcSerialization["Type"] => {
  const tags = side === "server" ? clientTags : serverTags
  return RpcSerialization.RpcSerialization.of({
    contentType: "application/ndjson",
    includesFraming: true,
    unsafeMake: () => {
      let pending: Array<Buffer> = []
      let pendingBytes = 0
      const encodeOne = (message: unknown): string => {
        const text = JSON.stringify(message)
        const bytes = byteLength(text, maxFrameBytes)
        if (bytes <= maxFrameBytes) return text + "\n"
        const tag = (message as { _tag?: unknown })._tag
        if (side === "server" && tag === "Exit") {
          return (
            JSON.stringify(frameTooLarge((message as { requestId?: unknown }).requestId, bytes, maxFrameBytes)) + "\n"
          )
        }
        // A chunk, or a client's own frame: the caller checks its requests before they get here.
        throw tooLarge(bytes, maxFrameBytes)
      }
      return {
        decode: (data) => {
          const bytes =
            typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
          const items: Array<unknown> = []
          let start = 0
          // 0x0a never occurs inside a multi-byte UTF-8 sequence, so frames are split on bytes.
          let newline = bytes.indexOf(10)
          while (newline !== -1) {
            const size = pendingBytes + newline - start
            if (size > maxFrameBytes) throw tooLarge(size, maxFrameBytes)
            const line =
              pending.length === 0
                ? bytes.toString("utf8", start, newline)
                : Buffer.concat([...pending, bytes.subarray(start, newline)]).toString("utf8")
            pending = []
            pendingBytes = 0
            items.push(parse(line, tags))
            start = newline + 1
            newline = bytes.indexOf(10, start)
          }
          if (start < bytes.length) {
            pendingBytes += bytes.length - start
            if (pendingBytes > maxFrameBytes) throw tooLarge(pendingBytes, maxFrameBytes)
            // Copied: the chunk's memory may be reused once this returns.
            pending.push(Buffer.from(bytes.subarray(start)))
          }
          return items
        },
        encode: (message) => {
          if (!Array.isArray(message)) return encodeOne(message)
          if (message.length === 0) return undefined
          let data = ""
          for (const one of message) data += encodeOne(one)
          return data
        }
      }
    }
  })
}
