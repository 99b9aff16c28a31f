// JSON lines: the platform's runner takes any IPC message not its own for a close. A `Success` goes as
// `S[requestId,envelope]<TAB><result>`: escaping a large result was most of its cost.
import type { Duplex } from "node:stream"
import * as Lines from "./lines.js"

/** @internal */
export interface LinePort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: unknown) => void) => LinePort
  readonly off: (event: "message", listener: (message: unknown) => void) => LinePort
  readonly close: () => void
  readonly attach: (stream: Duplex) => void
  /** C93 */
  readonly unref: () => void
}

const successMark = 83 // "S"

// JSON may hold newlines as whitespace.
const lineOf = (message: unknown): string => {
  const success = message as { _tag?: unknown; requestId?: unknown; result?: unknown; envelope?: unknown }
  if (
    success._tag === "Success" &&
    typeof success.result === "string" &&
    success.result.indexOf("\n") === -1 &&
    // A lone surrogate would not survive UTF-8 unescaped.
    (success.result as { isWellFormed?: () => boolean }).isWellFormed?.() === true
  ) {
    return `S${JSON.stringify([success.requestId, success.envelope])}\t${success.result}\n`
  }
  return JSON.stringify(message) + "\n"
}

// A tab inside the header would be escaped.
const successOf = (line: string): unknown => {
  const tab = line.indexOf("\t")
  const [requestId, envelope] = JSON.parse(line.slice(1, tab)) as [unknown, unknown]
  return { _tag: "Success", requestId, result: line.slice(tab + 1), envelope }
}

const unrefStream = (stream: Duplex) => (stream as { unref?: () => void }).unref?.()

/** The owner loads its runtime after its first message. @internal */
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
  // Per-chunk decoding cost a fifth more on 1 MiB.
  const lines = Lines.make({
    decode: Lines.text,
    maxLineBytes: Infinity,
    onLine: (line) => {
      let message: unknown
      try {
        message = line.charCodeAt(0) === successMark ? successOf(line) : JSON.parse(line)
      } catch {
        // As a port drops what it cannot read.
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
      // EPIPE: the peer's exit is what both sides act on.
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
