/** Globals Node, Deno and Bun share; `ref`/`unref` is Node's only. @internal */

/** @internal */
export interface Channel {
  onmessage: ((event: { readonly data: unknown }) => void) | null
  postMessage(message: unknown): void
  close(): void
  ref?(): void
  unref?(): void
}

const Broadcast = (globalThis as unknown as { readonly BroadcastChannel: new (name: string) => Channel })
  .BroadcastChannel

/** @internal */
export const open = (name: string): Channel => {
  const channel = new Broadcast(name)
  channel.unref?.()
  return channel
}

/** Fresh per message: one kept open would receive every other caller's messages. @internal */
export const postOn = (name: string, message: unknown): void => {
  const channel = new Broadcast(name)
  channel.postMessage(message)
  channel.close()
}

type Handle = { unref?(): void }

/** Longer delays fire at once. @internal */
export const maxTimeoutMs = 2 ** 31 - 1

/** @internal */
export const timerAt = (at: number, f: () => void): ReturnType<typeof setTimeout> => {
  const handle = setTimeout(f, Math.min(Math.max(0, at - Date.now()) + 1, maxTimeoutMs))
  ;(handle as Handle).unref?.()
  return handle
}

const immediate: (f: () => void) => void =
  typeof globalThis.setImmediate === "function" ? (f) => globalThis.setImmediate(f) : (f) => setTimeout(f, 0)

/** After a blocked loop timers run first; an answer already here is not silence. @internal */
export const afterPendingMessages = (f: () => void): void => immediate(f)

/** @internal */
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

/** @internal */
export interface ReplyPorts {
  readonly thread: number
  readonly close: () => void
}

/**
 * `undefined` where the runtime cannot send a thread a port. The reply channel's `ref` keeps the thread alive while
 * calls are in flight. @internal
 */
export const takeReplyPorts = (to: string, onReply: (data: unknown) => void): ReplyPorts | undefined => {
  // Lazily: a socket-only process loads none of it.
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
