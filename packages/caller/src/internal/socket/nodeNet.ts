/**
 * The socket plane's one platform adapter: a Unix socket through `node:net`, which Node, Deno 2 and Bun 1 all
 * provide. Nothing else of the package imports a `node:` module.
 *
 * @internal
 */
import * as Net from "node:net"

/** What the connection needs of a socket. @internal */
export interface Transport {
  /** Hands `text` to the socket; `false` once the socket can take nothing more. */
  readonly write: (text: string) => boolean
  /** Ends the socket after what was written (a polite close). */
  readonly end: () => void
  /** Ends the socket at once. */
  readonly destroy: () => void
  /** Whether the socket keeps the process alive. */
  readonly hold: (held: boolean) => void
}

/** What the socket tells its connection. @internal */
export interface Handlers {
  readonly onOpen: () => void
  readonly onData: (bytes: Uint8Array) => void
  readonly onClose: () => void
}

/** Connects to the Unix socket at `path`. @internal */
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
