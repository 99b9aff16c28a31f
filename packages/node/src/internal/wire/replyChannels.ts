/**
 * The reply channels a thread posts to (`wire/remoteProtocol.ts`): one sink per remote, kept open for the next
 * answer, the least recently opened closed past a bound (an evicted remote just gets a new one). A remote that names
 * its thread gets a port of its own, sent to that thread (`ReplyPort`); others get a `BroadcastChannel` instance.
 * None keeps its thread alive. Node built-ins only, so the owner's bundle loads nothing more for it.
 *
 * @internal
 */
import * as WorkerThreads from "node:worker_threads"

/** Where one remote's replies are posted. @internal */
export interface ReplySink {
  readonly postMessage: (message: unknown) => void
  readonly close: () => void
}

/** @internal */
export interface ReplyChannels {
  /** The open sink of the remote `name`, opened now if it is not: a port to `thread` when it names one. */
  readonly get: (name: string, thread?: number | undefined) => ReplySink
  /** Closes every sink. */
  readonly close: () => void
}

const channelSink = (name: string): ReplySink => {
  const channel = new WorkerThreads.BroadcastChannel(name)
  channel.unref()
  return channel
}

/**
 * A port whose other end goes to the thread `thread` for the remote `to` (`ReplyPort`, C150); `undefined` where it
 * cannot (this very thread, or a Node without `postMessageToThread`). The main thread hands a port over at once; any
 * other thread's handover passes through the main thread, which may be blocked (C22 holds for direct calls while it
 * is): with `fallbackAfterMs`, what was posted and not yet confirmed received goes on the remote's channel too after
 * that long, and later replies with it until the handover is confirmed. Only replies the remote reads once each (one
 * per call, by call id) may be posted twice so; without `fallbackAfterMs` only the main thread uses ports.
 *
 * @internal
 */
export const openReplyPort = (
  to: string,
  thread: number | undefined,
  fallbackAfterMs?: number | undefined
): ReplySink | undefined => {
  // A namespace read: Nodes before 22.5 have no `postMessageToThread` to import by name.
  const { postMessageToThread, isMainThread } = WorkerThreads
  if (thread === undefined || thread === WorkerThreads.threadId || typeof postMessageToThread !== "function") {
    return undefined
  }
  if (!isMainThread && fallbackAfterMs === undefined) return undefined
  const { port1, port2 } = new WorkerThreads.MessageChannel()
  const handover = postMessageToThread(thread, { _tag: "ReplyPort", to, port: port2 }, [port2])
  if (isMainThread) {
    handover.catch(() => port1.close())
    return port1
  }
  return confirmed(to, port1, handover, fallbackAfterMs!)
}

const confirmed = (
  to: string,
  port: WorkerThreads.MessagePort,
  handover: Promise<void>,
  fallbackAfterMs: number
): ReplySink => {
  let state: "handing over" | "port" | "channel" = "handing over"
  let unconfirmed: Array<unknown> = []
  let channel: ReplySink | undefined
  const onChannel = (message: unknown) => (channel ??= channelSink(to)).postMessage(message)
  const fallBack = () => {
    if (state !== "handing over") return
    state = "channel"
    for (const message of unconfirmed) onChannel(message)
    unconfirmed = []
  }
  const timer = setTimeout(fallBack, fallbackAfterMs)
  timer.unref()
  handover.then(
    () => {
      clearTimeout(timer)
      state = "port"
      unconfirmed = []
    },
    () => {
      clearTimeout(timer)
      fallBack()
      port.close()
    }
  )
  return {
    postMessage: (message) => {
      if (state === "channel") return onChannel(message)
      port.postMessage(message)
      if (state === "handing over") unconfirmed.push(message)
    },
    close: () => {
      clearTimeout(timer)
      port.close()
      channel?.close()
    }
  }
}

/** An owner thread's replies to one remote wait this long for its reply port before its channel carries them. */
const ownerFallbackMs = 100

const openSink = (name: string, thread: number | undefined): ReplySink =>
  openReplyPort(name, thread, ownerFallbackMs) ?? channelSink(name)

/**
 * The sinks of the remotes last heard from, at most `max` (the least recently opened closed past it), each opened by
 * `open`; a remote `open` has no sink for is not kept.
 *
 * @internal
 */
export const bounded = <Sink extends ReplySink | undefined>(
  max: number,
  open: (name: string, thread: number | undefined) => Sink
) => {
  const sinks = new Map<string, ReplySink>()
  return {
    get: (name: string, thread?: number | undefined): Sink => {
      const known = sinks.get(name)
      if (known !== undefined) return known as Sink
      const sink = open(name, thread)
      if (sink === undefined) return sink
      sinks.set(name, sink)
      if (sinks.size > max) {
        const [oldest, evicted] = sinks.entries().next().value!
        evicted.close()
        sinks.delete(oldest)
      }
      return sink
    },
    /** The sink of `name`, if one is open. */
    peek: (name: string): ReplySink | undefined => sinks.get(name),
    close: () => {
      for (const sink of sinks.values()) sink.close()
      sinks.clear()
    }
  }
}

/** @internal */
export const make = (max: number): ReplyChannels => bounded(max, openSink)
