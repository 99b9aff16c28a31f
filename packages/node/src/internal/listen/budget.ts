/**
 * What a listener's peers may hold of the host's memory together (C63): the bytes of their unfinished frames (held by
 * each connection's decoder, `frames.ts`) and of the answers written to them but not yet taken by the kernel. Over the
 * budget, the peers holding the most are closed until the sum is under it again: with the sum over `maxBytes` and `n`
 * peers, the largest holds more than `maxBytes / n`, its share, so a peer within its share is never the one closed.
 *
 * A peer also stops being read while it leaves its answers unread or has too many calls unanswered (C64): what it
 * sends then waits in its own socket, not in the host.
 *
 * @internal
 */
import * as Socket from "@effect/platform/Socket"
import * as Effect from "effect/Effect"

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
export const make = (maxBytes: number): Budget => ({ maxBytes, used: 0, peers: new Set(), reading: undefined })

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
