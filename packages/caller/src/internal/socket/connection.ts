/** One caller's connection to a listener (C46, C110). @internal */
import * as Net from "./nodeNet.js"
import * as Wire from "./wire.js"

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
  readonly onExit: (exit: Wire.ExitEncoded) => void
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
  readonly transport: Net.Transport
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
  let frame: Wire.FromHost
  try {
    frame = JSON.parse(line) as Wire.FromHost
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
    if (now - since > Wire.silentAfterMs) {
      // Our loop may have blocked with the answer unread.
      return void afterReads(() => {
        if (Date.now() - Math.max(connection.lastHeard, connection.openedAt) > Wire.silentAfterMs) {
          drop(connection, "host_unresponsive")
        }
      })
    }
    if (now - connection.lastSent >= Wire.pingEveryMs) write(connection, Wire.ping)
  }, 250)
  const timer = connection.watchdog as { unref?: () => void }
  timer.unref?.()
}

/** @internal */
export const open = (path: string, maxFrameBytes: number): Connection => {
  const split = Wire.lines(maxFrameBytes)
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
    transport: undefined as unknown as Net.Transport,
    maxFrameBytes,
    watchdog: undefined,
    idle: undefined
  }
  ;(connection as { transport: Net.Transport }).transport = Net.connect(path, {
    onOpen: () => {
      connection.state = "open"
      connection.openedAt = Date.now()
      write(connection, Wire.hello)
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
    }, Wire.idleAfterMs)
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
  if (Date.now() - connection.lastHeard <= Wire.staleAfterMs) return undefined
  if (!connection.probing) {
    connection.probing = true
    write(connection, Wire.ping)
  }
  const answered = await nextHeard(connection, Wire.ackWithinMs)
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
