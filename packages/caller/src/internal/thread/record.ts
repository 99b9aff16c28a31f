/**
 * One caller's record, as the SDK's `Protocol` keeps one (C22, C22a), and the channels and timers it posts and arms
 * on. @internal
 */
import type * as Plane from "../../Plane.js"
import { deadlineOf } from "../../Operations.js"
import {
  DeliveryUnknown,
  fromEncoded,
  HostUnavailable,
  type McpWorkerError,
  UnknownWorker,
  WorkerFailed
} from "../../McpWorkerError.js"
import * as Protocol from "./protocol.js"

// The runtime's part: globals Node, Deno and Bun share; `ref`/`unref` is Node's only.

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

const openChannel = (name: string): Channel => {
  const channel = new Broadcast(name)
  channel.unref?.()
  return channel
}

/** Fresh per message: one kept open would receive every other caller's messages. */
const postOn = (name: string, message: unknown): void => {
  const channel = new Broadcast(name)
  channel.postMessage(message)
  channel.close()
}

type Handle = { unref?(): void }

/** Longer delays fire at once. */
const maxTimeoutMs = 2 ** 31 - 1

const timerAt = (at: number, f: () => void): ReturnType<typeof setTimeout> => {
  const handle = setTimeout(f, Math.min(Math.max(0, at - Date.now()) + 1, maxTimeoutMs))
  ;(handle as Handle).unref?.()
  return handle
}

const immediate: (f: () => void) => void =
  typeof globalThis.setImmediate === "function" ? (f) => globalThis.setImmediate(f) : (f) => setTimeout(f, 0)

/** After a blocked loop timers run first; an answer already here is not silence. */
const afterPendingMessages = (f: () => void): void => immediate(f)

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
 * calls are in flight.
 */
const takeReplyPorts = (to: string, onReply: (data: unknown) => void): ReplyPorts | undefined => {
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

// The record and its steps

/** @internal */
export interface Waiting {
  readonly operation: Protocol.Operation
  /** `undefined`: the request went to the host. */
  readonly channel: string | undefined
  /** The deadline plus `graceMs`. */
  readonly giveUpAt: number | undefined
  /** C22a: a host refuses the request later. */
  readonly ackBy: number | undefined
  acked: boolean
  readonly onProgress: ((progress: Protocol.Progress) => void) | undefined
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
  readonly release: () => void
  /** `ackBy`, then `giveUpAt`. */
  timer: ReturnType<typeof setTimeout> | undefined
}

/** @internal */
export interface ThreadClient {
  readonly from: string
  readonly replies: Channel
  /** `Protocol.ReplyPort`, where this runtime takes them. */
  readonly replyPorts: ReplyPorts | undefined
  readonly announcements: Channel
  readonly pending: Map<number, Waiting>
  readonly routes: Map<string, { readonly channel: string; readonly timeoutMs: number; readonly traced: boolean }>
  nextCallId: number
  lastHeard: number
  lastSent: number
  probe: { readonly sentAt: number; readonly withinMs: number } | undefined
  knownHost: string | undefined
  hostGone: boolean
  keepAlive: { readonly handle: ReturnType<typeof setTimeout>; readonly at: number } | undefined
}

/** @internal */
export const post = (client: ThreadClient, message: Protocol.RemoteMessage): void => {
  postOn(Protocol.hostChannel, message)
  client.lastSent = Date.now()
}

/** On the request's own channel, after it. @internal */
export const interrupt = (client: ThreadClient, callId: number, reply: boolean, call = client.pending.get(callId)) => {
  const message: Protocol.Interrupt = { _tag: "Interrupt", from: client.from, callId, reply }
  if (call?.channel === undefined) post(client, message)
  else postOn(call.channel, message)
}

/** @internal */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/** @internal */
export const settle = (client: ThreadClient, callId: number, outcome: Outcome): void => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  client.pending.delete(callId)
  if (call.timer !== undefined) clearTimeout(call.timer)
  call.release()
  if (client.pending.size === 0) client.replies.unref?.()
  if (outcome.ok) call.resolve(outcome.value)
  else call.reject(outcome.error)
}

/** @internal */
export const failAll = (
  client: ThreadClient,
  error: (operation: Protocol.Operation) => unknown,
  which: (call: Waiting) => boolean = () => true
): void => {
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (!which(call)) continue
    interrupt(client, callId, false, call)
    settle(client, callId, { ok: false, error: error(call.operation) })
  }
}

/** @internal */
export const afterHostClosed = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message: "the mcp-worker host of this process has closed: build NodeMcpWorkers.layer() again to open workers"
      })
    : new UnknownWorker({ workerId: operation.workerId })

/** @internal */
export const heard = (client: ThreadClient): void => {
  client.lastHeard = Date.now()
  client.probe = undefined
}

const decoded = (encoded: unknown): unknown => {
  try {
    return fromEncoded(encoded)
  } catch {
    return new Error("the mcp-worker host's answer could not be read (another version of mcp-worker?)")
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const isCallReply = (u: Record<string, unknown>): boolean => typeof u.callId === "number"

// From the owner thread: not word from the host, whose liveness is tracked.
const onResult = (client: ThreadClient, reply: Record<string, unknown>): void => {
  const callId = reply.callId as number
  const call = client.pending.get(callId)
  if (call === undefined || call.operation._tag !== "RemoteCall" || typeof reply.result !== "string") return
  let value: unknown
  try {
    value = JSON.parse(reply.result)
  } catch {
    return settle(client, callId, { ok: false, error: new Error("the owner's answer could not be read") })
  }
  // The envelope is the server's response line.
  settle(client, callId, {
    ok: true,
    value: reply.envelope === true ? (isRecord(value) ? value.result : undefined) : value
  })
}

// C22a: a waiting direct request may have been taken, so it is never `not_sent`.
const onWorkerEnded = (client: ThreadClient, workerId: string, encoded: unknown): void => {
  const route = client.routes.get(workerId)
  if (route === undefined) return
  client.routes.delete(workerId)
  const error = decoded(encoded)
  const failed = error instanceof WorkerFailed ? error : undefined
  const ended = new WorkerFailed({
    workerId,
    kind: failed?.kind ?? "closing",
    message: failed?.message ?? "the worker closed while the request was in flight",
    delivery: "unknown"
  })
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (call.channel === route.channel) settle(client, callId, { ok: false, error: ended })
  }
}

const onProgress = (client: ThreadClient, callId: number, progress: unknown): void => {
  const callback = client.pending.get(callId)?.onProgress
  if (callback === undefined || !isRecord(progress) || typeof progress.progress !== "number") return
  // The caller's own code must not throw into message handling.
  try {
    callback(progress as unknown as Protocol.Progress)
  } catch {
    return
  }
}

/** @internal */
export const onReply = (client: ThreadClient, data: unknown): void => {
  if (!isRecord(data)) return
  if (data._tag === "Result") return isCallReply(data) ? onResult(client, data) : undefined
  switch (data._tag) {
    case "Route":
      if (typeof data.workerId !== "string" || typeof data.channel !== "string" || typeof data.timeoutMs !== "number")
        return
      heard(client)
      client.routes.set(data.workerId, {
        channel: data.channel,
        timeoutMs: data.timeoutMs,
        traced: data.traced === true
      })
      return
    case "Unrouted":
      if (typeof data.workerId !== "string") return
      heard(client)
      client.routes.delete(data.workerId)
      return
    case "WorkerEnded":
      if (typeof data.workerId !== "string") return
      heard(client)
      return onWorkerEnded(client, data.workerId, data.error)
    case "Ack": {
      if (typeof data.hostId !== "string") return
      heard(client)
      client.knownHost = data.hostId
      client.hostGone = false
      const call = typeof data.callId === "number" ? client.pending.get(data.callId) : undefined
      if (call !== undefined) call.acked = true
      return
    }
  }
  if (!isCallReply(data)) return
  const callId = data.callId as number
  switch (data._tag) {
    case "RemoteSuccess":
      heard(client)
      return settle(client, callId, { ok: true, value: data.value })
    case "RemoteFailure":
      // An owner's refusal: nothing of the host, but not silence either.
      heard(client)
      return settle(client, callId, { ok: false, error: decoded(data.error) })
    case "Defect":
      heard(client)
      return settle(client, callId, { ok: false, error: new Error(String(data.message)) })
    case "RemoteProgress":
      heard(client)
      return onProgress(client, callId, data.progress)
  }
}

/** @internal */
export const onAnnouncement = (client: ThreadClient, data: unknown, later: (f: () => void) => void): void => {
  if (!isRecord(data) || typeof data.hostId !== "string") return
  if (data._tag === "Up") {
    client.knownHost = data.hostId
    client.hostGone = false
    heard(client)
    return
  }
  if (data._tag !== "Gone") return
  // Another host in the process, on standby.
  if (client.knownHost !== undefined && data.hostId !== client.knownHost) return
  client.knownHost = undefined
  client.hostGone = true
  client.routes.clear()
  // Answers to calls run before the announcement are read this turn.
  later(() => {
    if (client.hostGone) failAll(client, afterHostClosed)
  })
}

// C22a
const noHost = () =>
  new HostUnavailable({
    message:
      `no mcp-worker host acknowledged the request within ${Protocol.ackWithinMs} ms, so it was not sent (and a ` +
      "host that reads it later refuses it): build NodeMcpWorkers.layer() in some thread of this process (normally " +
      "the main thread) before using NodeMcpWorkers.layerRemote or makePromiseClient; if one runs, its event loop " +
      "was blocked"
  })

const hostUnresponsive = (operation: Protocol.Operation) =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message:
          "the mcp-worker host stopped answering while it opened the worker; if it comes back, the open is " +
          "interrupted and nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId: operation.workerId,
        requestId: "",
        reason: "host_unresponsive",
        delivery: "unknown"
      })

const workerIdOf = (operation: Protocol.Operation): string =>
  operation._tag === "RemoteOpen" ? "" : operation.workerId

const nextOf = (call: Waiting): number | undefined =>
  call.ackBy !== undefined && !call.acked ? call.ackBy : call.giveUpAt

/** After pending messages: an `Ack` already here is not silence. @internal */
export const armCall = (client: ThreadClient, callId: number, call: Waiting): void => {
  const at = nextOf(call)
  call.timer = at === undefined ? undefined : timerAt(at, () => afterPendingMessages(() => checkCall(client, callId)))
}

const checkCall = (client: ThreadClient, callId: number): void => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  const now = Date.now()
  if (call.ackBy !== undefined && !call.acked && now > call.ackBy) {
    return settle(client, callId, { ok: false, error: noHost() })
  }
  if (call.giveUpAt !== undefined && now >= call.giveUpAt) {
    // It may have reached the server.
    interrupt(client, callId, false, call)
    return settle(client, callId, {
      ok: false,
      error: new DeliveryUnknown({
        workerId: workerIdOf(call.operation),
        requestId: "",
        reason: "timeout",
        delivery: "unknown"
      })
    })
  }
  armCall(client, callId, call)
}

const nextCheck = (client: ThreadClient): number => {
  let at = client.probe !== undefined ? client.probe.sentAt + client.probe.withinMs : Number.POSITIVE_INFINITY
  if (client.pending.size > 0) at = Math.min(at, client.lastSent + Protocol.pingEveryMs)
  return at
}

/** Re-armed only for an earlier check, about once per `pingEveryMs`. @internal */
export const armKeepAlive = (client: ThreadClient): void => {
  const at = nextCheck(client)
  if (at === Number.POSITIVE_INFINITY || (client.keepAlive !== undefined && client.keepAlive.at <= at)) return
  if (client.keepAlive !== undefined) clearTimeout(client.keepAlive.handle)
  const handle = timerAt(at, () => {
    client.keepAlive = undefined
    afterPendingMessages(() => checkHost(client))
  })
  client.keepAlive = { handle, at }
}

const directChannels = (client: ThreadClient): Set<string> => {
  const channels = new Set<string>()
  for (const call of client.pending.values()) if (call.channel !== undefined) channels.add(call.channel)
  return channels
}

const checkHost = (client: ThreadClient): void => {
  const now = Date.now()
  const probe = client.probe
  if (probe !== undefined && now - probe.sentAt >= probe.withinMs) {
    client.probe = undefined
    // A call waiting for its own `Ack` is left to its `ackBy`.
    failAll(client, hostUnresponsive, (call) => call.ackBy === undefined || call.acked)
  }
  if (client.pending.size > 0 && now - client.lastSent >= Protocol.pingEveryMs) {
    post(client, { _tag: "Ping", from: client.from })
    // An owner thread running a direct request goes by this caller's word too.
    for (const channel of directChannels(client)) postOn(channel, { _tag: "Ping", from: client.from })
    // Pings must not postpone the verdict on a host that is gone.
    if (client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.pingAckWithinMs }
  }
  armKeepAlive(client)
}

/** @internal */
export const stopKeepAlive = (client: ThreadClient): void => {
  if (client.keepAlive !== undefined) clearTimeout(client.keepAlive.handle)
  client.keepAlive = undefined
}

/** @internal */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((progress: Protocol.Progress) => void) | undefined
  readonly trace?: Protocol.TraceContext | undefined
}

/** @internal */
export interface Sent {
  readonly callId: number
  readonly answer: Promise<unknown>
}

/** @internal */
export const callOf = (call: Omit<Plane.Call, "signal" | "trace">): Protocol.RemoteCall => {
  const { saveTo, spill, onProgress, idleMs } = call
  return {
    _tag: "RemoteCall",
    workerId: call.workerId,
    method: call.method as Protocol.Method,
    params: call.params,
    deadline: deadlineOf(call.budgetMs),
    ...(idleMs === undefined ? {} : { idleMs }),
    ...(saveTo === undefined ? {} : { saveTo }),
    ...(spill === undefined ? {} : { spill }),
    // C29: a direct success could overtake the last progress.
    ...(onProgress === undefined ? { direct: true } : { progress: true })
  }
}

/** @internal */
export const disposedError = (message: string): Error => {
  const error = new Error(message)
  error.name = "AbortError"
  return error
}

/** Its channels never keep the thread alive while no call is in flight. @internal */
export const make = (): ThreadClient => {
  const from = Protocol.replyChannel(Protocol.randomId())
  const client: ThreadClient = {
    from,
    replies: openChannel(from),
    replyPorts: takeReplyPorts(from, (data) => onReply(client, data)),
    announcements: openChannel(Protocol.announceChannel),
    pending: new Map(),
    routes: new Map(),
    nextCallId: 0,
    lastHeard: Number.NEGATIVE_INFINITY,
    lastSent: Number.NEGATIVE_INFINITY,
    probe: undefined,
    knownHost: undefined,
    hostGone: false,
    keepAlive: undefined
  }
  client.replies.onmessage = (event) => onReply(client, event.data)
  client.announcements.onmessage = (event) => onAnnouncement(client, event.data, afterPendingMessages)
  return client
}

/** @internal */
export const dispose = (client: ThreadClient): void => {
  stopKeepAlive(client)
  for (const [callId, call] of Array.from(client.pending.entries())) {
    interrupt(client, callId, false, call)
    settle(client, callId, {
      ok: false,
      error: disposedError("the mcp-worker client was disposed while the call was in flight")
    })
  }
  client.replies.close()
  client.replyPorts?.close()
  client.announcements.close()
}

/** C11, C66 @internal */
export const send = (client: ThreadClient, operation: Protocol.Operation, options: CallOptions = {}): Sent => {
  const { signal } = options
  if (signal?.aborted === true) return refused(signal.reason)
  if (client.hostGone) return refused(afterHostClosed(operation))
  const callId = ++client.nextCallId
  const now = Date.now()
  // C29
  if (
    operation._tag === "RemoteCall" &&
    options.onProgress === undefined &&
    now - client.lastHeard <= Protocol.staleAfterMs
  ) {
    const route = client.routes.get(operation.workerId)
    // C83
    const direct = route !== undefined && (!route.traced || options.trace !== undefined)
    if (direct) return sendDirect(client, callId, operation, route, options)
  }
  // C22a
  const ackBy = now - client.lastHeard > Protocol.staleAfterMs ? now + Protocol.ackWithinMs : undefined
  if (ackBy !== undefined && client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.ackWithinMs }
  // An open or close is bounded by the host, and by a gone host's `Ack`s.
  const deadline = operation._tag === "RemoteCall" ? operation.deadline : undefined
  const answer = register(client, callId, {
    operation,
    channel: undefined,
    giveUpAt: deadline === undefined ? undefined : deadline + Protocol.graceMs,
    ackBy,
    options
  })
  const message: Protocol.RemoteRequest = {
    _tag: "RemoteRequest",
    from: client.from,
    callId,
    ...(ackBy === undefined ? {} : { ackBy }),
    operation,
    ...(options.trace === undefined ? {} : { trace: options.trace }),
    ...replyThread(client)
  }
  post(client, message)
  armKeepAlive(client)
  return { callId, answer }
}

const replyThread = (client: ThreadClient): { readonly thread?: number } =>
  client.replyPorts === undefined ? {} : { thread: client.replyPorts.thread }

const refused = (error: unknown): Sent => ({ callId: 0, answer: Promise.reject(error) })

// No `Ack`: the host was heard from lately; the owner thread runs the budget.
const sendDirect = (
  client: ThreadClient,
  callId: number,
  operation: Protocol.RemoteCall,
  route: { readonly channel: string; readonly timeoutMs: number },
  options: CallOptions
): Sent => {
  const deadline = operation.deadline ?? Date.now() + route.timeoutMs
  const answer = register(client, callId, {
    operation,
    channel: route.channel,
    giveUpAt: deadline + Protocol.graceMs,
    ackBy: undefined,
    options
  })
  // C29
  const { _tag, workerId, direct, progress, ...envelope } = operation
  const { trace } = options
  const message: Protocol.Direct = {
    ...envelope,
    _tag: "Direct",
    from: client.from,
    callId,
    deadline,
    ...(trace === undefined ? {} : { trace }),
    ...replyThread(client)
  }
  postOn(route.channel, message)
  armKeepAlive(client)
  return { callId, answer }
}

const register = (
  client: ThreadClient,
  callId: number,
  call: {
    readonly operation: Protocol.Operation
    readonly channel: string | undefined
    readonly giveUpAt: number | undefined
    readonly ackBy: number | undefined
    readonly options: CallOptions
  }
): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const { signal, onProgress } = call.options
    const onAbort = () => {
      if (client.pending.has(callId)) interrupt(client, callId, true)
    }
    const waiting: Waiting = {
      operation: call.operation,
      channel: call.channel,
      giveUpAt: call.giveUpAt,
      ackBy: call.ackBy,
      acked: false,
      onProgress,
      resolve,
      reject,
      release: signal === undefined ? () => {} : () => signal.removeEventListener("abort", onAbort),
      timer: undefined
    }
    client.pending.set(callId, waiting)
    if (client.pending.size === 1) client.replies.ref?.()
    signal?.addEventListener("abort", onAbort, { once: true })
    armCall(client, callId, waiting)
  })

/** For an `events` iterator left early. @internal */
export const abandon = (client: ThreadClient, sent: Sent): void => {
  const call = client.pending.get(sent.callId)
  if (call === undefined) return
  sent.answer.catch(() => {})
  interrupt(client, sent.callId, false, call)
  settle(client, sent.callId, { ok: false, error: disposedError("the call was abandoned") })
}
