/**
 * The data plane of an owner process: one JSON line per message each way over a pipe of its own. The IPC channel
 * cannot carry it: the platform's runner in a child process takes any IPC message that is not a runner request for
 * a close. It has the shape of the `MessagePort` the thread owner uses (`postMessage`, `on("message")`, `close`), so
 * the owner runtime and the host's record take either. Node built-ins only: the owner process's entry uses it before
 * it loads anything else.
 *
 * Every data-plane message is plain data whose strings carry the JSON text of params and results
 * (`OwnerProtocol.ts`), so JSON keeps what the structured clone of a `MessagePort` keeps; `undefined` fields are
 * dropped, which the protocol's optional fields allow.
 *
 * One message has a line of its own shape: a `Success`, whose result is already JSON text (the server's response
 * line, usually), goes as `S[requestId,envelope]<TAB><result>` instead of being escaped into a JSON string and
 * parsed back, which for a large result was most of its cost. Only a well-formed result with no newline takes that
 * path (a JSON text may hold newlines as whitespace); any other line is a JSON object, so the first character tells
 * them apart.
 */
import type { Duplex } from "node:stream"
import * as Lines from "./lines.js"

/** A data port over a byte stream, as the host and the owner process each hold one end of it. @internal */
export interface LinePort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: unknown) => void) => LinePort
  readonly off: (event: "message", listener: (message: unknown) => void) => LinePort
  readonly close: () => void
  /** Starts reading and writing `stream`; what was posted before is written first. */
  readonly attach: (stream: Duplex) => void
  /** The stream, now or once attached, does not hold the event loop (C93). */
  readonly unref: () => void
}

const successMark = 83 // "S"

/** The line of one message: a `Success` with its result as is, anything else as JSON. */
const lineOf = (message: unknown): string => {
  const success = message as { _tag?: unknown; requestId?: unknown; result?: unknown; envelope?: unknown }
  if (
    success._tag === "Success" &&
    typeof success.result === "string" &&
    success.result.indexOf("\n") === -1 &&
    // A lone surrogate would not survive UTF-8 as is; JSON escapes it (a result read from a pipe never has one).
    (success.result as { isWellFormed?: () => boolean }).isWellFormed?.() === true
  ) {
    return `S${JSON.stringify([success.requestId, success.envelope])}\t${success.result}\n`
  }
  return JSON.stringify(message) + "\n"
}

/** Reads a `Success` line back; a tab inside the header would be escaped, so the first tab ends it. */
const successOf = (line: string): unknown => {
  const tab = line.indexOf("\t")
  const [requestId, envelope] = JSON.parse(line.slice(1, tab)) as [unknown, unknown]
  return { _tag: "Success", requestId, result: line.slice(tab + 1), envelope }
}

/**
 * A port not attached to a stream yet: messages posted before `attach` wait for it, and messages that arrive while
 * nobody listens wait for the first listener (the owner loads its runtime after it read its first message).
 *
 * @internal
 */
const unrefStream = (stream: Duplex) => (stream as { unref?: () => void }).unref?.()

export const make = (): LinePort => {
  let stream: Duplex | undefined
  let closed = false
  let unrefd = false
  let outbox: Array<string> = []
  let inbox: Array<unknown> = []
  const listeners: Array<(message: unknown) => void> = []

  const deliver = (message: unknown) => {
    if (listeners.length === 0) {
      inbox.push(message)
      return
    }
    for (const listener of listeners.length === 1 ? listeners : [...listeners]) listener(message)
  }
  // Decoded once, when a line's newline comes (a big result is many chunks): decoding each chunk as it came cost a
  // fifth more on a 1 MiB result.
  const lines = Lines.make({
    decode: Lines.text,
    maxLineBytes: Infinity,
    onLine: (line) => {
      let message: unknown
      try {
        message = line.charCodeAt(0) === successMark ? successOf(line) : JSON.parse(line)
      } catch {
        // Not a line of this protocol: dropped, as a port drops what it cannot read.
        return
      }
      deliver(message)
    }
  })
  const onData = (chunk: Buffer) => lines.push(chunk)
  const port: LinePort = {
    postMessage: (message) => {
      if (closed) return
      const line = lineOf(message)
      if (stream === undefined) outbox.push(line)
      else stream.write(line)
    },
    on: (_event, listener) => {
      listeners.push(listener)
      if (inbox.length > 0) {
        const waiting = inbox
        inbox = []
        for (const message of waiting) deliver(message)
      }
      return port
    },
    off: (_event, listener) => {
      const at = listeners.indexOf(listener)
      if (at !== -1) listeners.splice(at, 1)
      return port
    },
    close: () => {
      if (closed) return
      closed = true
      outbox = []
      inbox = []
      listeners.length = 0
      // What was written already still goes out; the stream is released once it has.
      const ending = stream
      ending?.end(() => ending.destroy())
    },
    attach: (attached) => {
      if (closed) {
        attached.destroy()
        return
      }
      stream = attached
      if (unrefd) unrefStream(attached)
      attached.on("data", onData)
      // A write to a peer that is gone fails here (EPIPE); the peer's exit, or the IPC channel's end, is what the
      // host and the owner act on.
      attached.on("error", () => {})
      for (const line of outbox) attached.write(line)
      outbox = []
    },
    unref: () => {
      unrefd = true
      if (stream !== undefined) unrefStream(stream)
    }
  }
  return port
}
