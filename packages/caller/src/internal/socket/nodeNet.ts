/** The package's only `node:` import: Node, Deno 2 and Bun 1 all provide `node:net`. @internal */
import * as Net from "node:net"

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
