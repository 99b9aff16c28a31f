/**
 * What the thread plane needs of its runtime, from globals every runtime it serves has (Node, Deno and Bun):
 * `BroadcastChannel`, timers, and a way to run after the messages that arrived meanwhile were read. Holding the thread
 * alive (`ref`/`unref`) is Node's; elsewhere it is simply not done.
 *
 * @internal
 */

/** A `BroadcastChannel` instance, as far as the plane uses it. @internal */
export interface Channel {
  onmessage: ((event: { readonly data: unknown }) => void) | null
  postMessage(message: unknown): void
  close(): void
  ref?(): void
  unref?(): void
}

const Broadcast = (globalThis as unknown as { readonly BroadcastChannel: new (name: string) => Channel })
  .BroadcastChannel

/** A channel instance that never keeps its thread alive on its own. @internal */
export const open = (name: string): Channel => {
  const channel = new Broadcast(name)
  channel.unref?.()
  return channel
}

/**
 * Posts on the channel `name`. A fresh instance per message, closed at once: an instance kept open would receive
 * every other caller's messages on that name too.
 *
 * @internal
 */
export const postOn = (name: string, message: unknown): void => {
  const channel = new Broadcast(name)
  channel.postMessage(message)
  channel.close()
}

type Handle = { unref?(): void }

/** The longest delay a timer holds (longer ones fire at once). @internal */
export const maxTimeoutMs = 2 ** 31 - 1

/** A timer that never keeps the thread alive, firing at `at` (`Date.now()` time) or at once if it has passed. @internal */
export const timerAt = (at: number, f: () => void): ReturnType<typeof setTimeout> => {
  const handle = setTimeout(f, Math.min(Math.max(0, at - Date.now()) + 1, maxTimeoutMs))
  ;(handle as Handle).unref?.()
  return handle
}

const immediate: (f: () => void) => void =
  typeof globalThis.setImmediate === "function" ? (f) => globalThis.setImmediate(f) : (f) => setTimeout(f, 0)

/**
 * Runs `f` after the messages that arrived while this thread's event loop was blocked have been read: after such a
 * block timers run first, and an answer already here must not be taken for silence.
 *
 * @internal
 */
export const afterPendingMessages = (f: () => void): void => immediate(f)

/** A Node `MessagePort`, as far as the caller reads one. @internal */
interface ReplyPortHandle {
  on(event: "message", listener: (data: unknown) => void): void
  unref(): void
  close(): void
}

interface WorkerThreads {
  readonly threadId: number
  readonly postMessageToThread?: unknown
}

interface NodeProcess {
  getBuiltinModule?(id: string): unknown
  on(event: "workerMessage", listener: (value: unknown) => void): void
  off(event: "workerMessage", listener: (value: unknown) => void): void
}

const nodeProcess = (globalThis as { readonly process?: NodeProcess }).process

/** The ports a caller takes replies on, and its thread id for the parties that send them. @internal */
export interface ReplyPorts {
  readonly thread: number
  readonly close: () => void
}

/**
 * Takes the replies to `to` on the ports repliers send this thread (`Protocol.ReplyPort`), where the runtime can send
 * a thread a port (Node's `postMessageToThread`); `undefined` elsewhere, and the replies keep coming on the channel.
 * A port never keeps the thread alive: the reply channel's `ref` does while calls are in flight.
 *
 * @internal
 */
export const takeReplyPorts = (to: string, onReply: (data: unknown) => void): ReplyPorts | undefined => {
  // Looked up when a thread caller is made, not on import: a process that only connects to a socket loads none of it.
  const workerThreads = nodeProcess?.getBuiltinModule?.("node:worker_threads") as WorkerThreads | undefined
  if (nodeProcess === undefined || typeof workerThreads?.postMessageToThread !== "function") return undefined
  const ports: Array<ReplyPortHandle> = []
  const onWorkerMessage = (value: unknown) => {
    const message = value as { readonly _tag?: unknown; readonly to?: unknown; readonly port?: ReplyPortHandle } | null
    if (message?._tag !== "ReplyPort" || message.to !== to || message.port === undefined) return
    const port = message.port
    port.on("message", onReply)
    port.unref()
    ports.push(port)
  }
  nodeProcess.on("workerMessage", onWorkerMessage)
  return {
    thread: workerThreads.threadId,
    close: () => {
      nodeProcess.off("workerMessage", onWorkerMessage)
      for (const port of ports) port.close()
    }
  }
}
