/** A `Plane` over a host's listener, one connection at a time (C46). @internal */
import {
  DeliveryUnknown,
  fromEncoded,
  HostUnavailable,
  InvalidInput,
  type McpWorkerError
} from "../../McpWorkerError.js"
import * as Operations from "../../Operations.js"
import type * as Plane from "../../Plane.js"
import * as Connection from "./connection.js"
import type { RequestPayload } from "./connection.js"

/** @internal */
export interface Options {
  readonly path: string
  readonly maxFrameBytes?: number | undefined
}

/** How a call ends when its connection does. */
type Kind = "request" | "lifecycle"

interface Client {
  readonly path: string
  readonly maxFrameBytes: number
  current: Connection.Connection | undefined
  nextId: number
  disposed: boolean
}

const acquire = (client: Client): Connection.Connection => {
  const current = client.current
  if (current !== undefined && current.state !== "dead") {
    Connection.use(current, 1)
    return current
  }
  const next = Connection.open(client.path, client.maxFrameBytes)
  client.current = next
  Connection.use(next, 1)
  return next
}

const notSent = (client: Client, reason: Connection.NotSentReason): McpWorkerError => {
  switch (reason._tag) {
    case "NoHost":
      return new HostUnavailable({
        message: `no mcp-worker host listens on ${client.path}; nothing was sent`,
        delivery: "not_sent"
      })
    case "Refused":
      return new HostUnavailable({
        message: `the mcp-worker host refused the connection: ${reason.reason}`,
        delivery: "not_sent"
      })
    case "Unresponsive":
      return new HostUnavailable({
        message: `the mcp-worker host did not answer within ${Connection.ackWithinMs} ms; the request was not sent`,
        delivery: "not_sent"
      })
  }
}

const lostError = (kind: Kind, workerId: string, lost: Connection.Lost | "interrupted"): McpWorkerError =>
  kind === "request"
    ? new DeliveryUnknown({ workerId, requestId: "", reason: lost, delivery: "unknown" })
    : new HostUnavailable({
        message:
          lost === "interrupted"
            ? "the mcp-worker host closed"
            : `the connection to the mcp-worker host was lost before it answered (${lost}); the operation may have happened`,
        delivery: "not_sent"
      })

const failure = (kind: Kind, workerId: string, cause: Connection.CauseEncoded): unknown => {
  const ending = Connection.endingOf(cause)
  switch (ending._tag) {
    case "Fail": {
      const error = ending.error as { _tag?: unknown; workerId?: unknown }
      // C43: replaced on the way out, before the worker id was known.
      const named = error?._tag === "ResultTooLarge" && error.workerId === "" ? { ...error, workerId } : error
      return fromEncoded(named)
    }
    case "Die":
      return new Error(`the mcp-worker host failed the call: ${JSON.stringify(ending.defect)}`)
    case "Interrupt":
      // The listener is closing: cancelled at the server.
      return lostError(kind, workerId, "interrupted")
  }
}

interface Send {
  readonly kind: Kind
  readonly workerId: string
  readonly tag: string
  readonly payload: object
  readonly envelope?: object | undefined
  readonly signal?: AbortSignal | undefined
  readonly onChunk?: ((values: ReadonlyArray<unknown>) => void) | undefined
}

const aborted = (signal: AbortSignal | undefined) => signal?.aborted === true

// C46
const send = async (client: Client, connection: Connection.Connection, call: Send): Promise<unknown> => {
  const refused = await Connection.live(connection)
  if (refused !== undefined) throw notSent(client, refused)
  // C66
  if (aborted(call.signal)) throw call.signal!.reason
  const id = String(client.nextId++)
  const frame =
    JSON.stringify({ _tag: "Request", id, tag: call.tag, payload: call.payload, headers: [], ...call.envelope }) + "\n"
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      connection.waiters.delete(id)
      // C11
      Connection.write(connection, JSON.stringify({ _tag: "Interrupt", requestId: id }) + "\n")
      reject(
        new DeliveryUnknown({ workerId: call.workerId, requestId: "", reason: "interrupted", delivery: "unknown" })
      )
    }
    const settle = () => call.signal?.removeEventListener("abort", onAbort)
    connection.waiters.set(id, {
      onChunk: (values) => {
        call.onChunk?.(values)
        Connection.write(connection, JSON.stringify({ _tag: "Ack", requestId: id }) + "\n")
      },
      onExit: (exit) => {
        settle()
        if (exit._tag === "Success") resolve(exit.value)
        else reject(failure(call.kind, call.workerId, exit.cause))
      },
      onLost: (lost) => {
        settle()
        reject(lostError(call.kind, call.workerId, lost))
      }
    })
    if (!Connection.write(connection, frame)) {
      connection.waiters.delete(id)
      return reject(notSent(client, { _tag: "NoHost" }))
    }
    call.signal?.addEventListener("abort", onAbort, { once: true })
  })
}

const run = async (client: Client, call: Send): Promise<unknown> => {
  if (client.disposed) throw notSent(client, { _tag: "NoHost" })
  if (aborted(call.signal)) throw call.signal!.reason
  const connection = acquire(client)
  try {
    return await send(client, connection, call)
  } finally {
    Connection.use(connection, -1)
  }
}

// `startTask` and `callTool` are both `tools/call`; a grant tells them apart.
const nameOf = (call: Plane.Call): string | undefined => {
  if (call.operation === undefined) return methods.get(call.method)
  const named = Operations.requests[call.operation as keyof typeof Operations.requests]
  return Object.hasOwn(Operations.requests, call.operation) && named.method === call.method ? call.operation : undefined
}

/** `tools/call` maps to `callTool`. */
const methods: ReadonlyMap<string, string> = new Map(
  Object.entries(Operations.requests).flatMap(([name, operation]) =>
    operation.method === "tools/call" && name !== "callTool" ? [] : [[operation.method as string, name] as const]
  )
)

/** @internal */
export const requestTags: ReadonlyMap<string, string> = methods

const frameBound = (client: Client, params: string): McpWorkerError | undefined => {
  const bytes = Connection.utf8Length(params) + 512
  if (bytes <= client.maxFrameBytes) return undefined
  return new InvalidInput({
    where: "arguments",
    path: "args",
    message: `the request is ${bytes} bytes, over the listener's frame limit of ${client.maxFrameBytes} bytes`,
    delivery: "not_sent"
  })
}

/** @internal */
export const spillRefused = "spill writes on the listener's host: over a socket, use saveTo (under the grant's saveDir)"

const request = (client: Client, call: Plane.Call): Promise<unknown> => {
  const name = nameOf(call)
  if (name === undefined) {
    return Promise.reject(
      new InvalidInput({
        where: "arguments",
        path: "method",
        message: `no request is ${call.operation === undefined ? call.method : `${call.operation} (${call.method})`}`,
        delivery: "not_sent"
      })
    )
  }
  const tooLarge = frameBound(client, call.params)
  if (tooLarge !== undefined) return Promise.reject(tooLarge)
  if (typeof call.spill === "string") {
    return Promise.reject(
      new InvalidInput({
        where: "arguments",
        path: "options.onTooLarge.spill",
        message: spillRefused,
        delivery: "not_sent"
      })
    )
  }
  const onProgress = call.onProgress
  let result: unknown
  const trace = call.trace
  const deadline = Operations.deadlineOf(call.budgetMs)
  const payload: RequestPayload = {
    id: call.workerId,
    params: call.params,
    ...(deadline === undefined ? {} : { deadline }),
    ...(call.idleMs === undefined ? {} : { idleMs: call.idleMs }),
    ...(call.saveTo === undefined ? {} : { saveTo: call.saveTo }),
    ...(call.spill === false ? { spill: false } : {}),
    // C84: the envelope carries the span's ids, the rest travels here.
    ...(trace === undefined || trace.length < 4 ? {} : { trace })
  }
  const streamed = run(client, {
    kind: "request",
    workerId: call.workerId,
    // The streamed twin.
    tag: onProgress === undefined ? name : `${name}Streamed`,
    payload,
    envelope: trace === undefined ? undefined : { traceId: trace[0], spanId: trace[1], sampled: trace[2] },
    signal: call.signal,
    onChunk: (values) => {
      for (const value of values as ReadonlyArray<{ _tag: string; value?: unknown } & Plane.Progress>) {
        if (value._tag === "Result") result = value.value
        else if (value._tag === "Progress") progressed(onProgress, value)
      }
    }
  })
  return onProgress === undefined ? streamed : streamed.then(() => result)
}

const progressed = (onProgress: ((progress: Plane.Progress) => void) | undefined, item: Plane.Progress) => {
  const { progress, total, message } = item
  try {
    // C29
    onProgress?.({ progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) })
  } catch {
    // ignored on purpose
  }
}

const lifecycle = (client: Client, tag: string, workerId: string, payload: object) =>
  run(client, { kind: "lifecycle", workerId, tag, payload: { id: workerId, ...payload } })

const randomId = (): string => {
  const bytes = new Uint8Array(12)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
}

/** Pulled on demand, so this process holds at most one batch. */
interface Batch {
  readonly items: Array<Plane.ServerNotification>
  readonly done: boolean
}

const events = (
  client: Client,
  workerId: string,
  capacity: number
): AsyncIterableIterator<Plane.ServerNotification> & AsyncDisposable => {
  const subscription = randomId()
  // Subscribes now, so the host reads the caller's next call after it.
  let connection: Connection.Connection | undefined = acquire(client)
  let buffered: Array<Plane.ServerNotification> = []
  let done = false
  const pull = (end: boolean) =>
    send(client, connection!, {
      kind: "lifecycle",
      workerId,
      tag: "events",
      payload: { id: workerId, subscription, capacity, ...(end ? { end: true } : {}) }
    }) as Promise<Batch>
  const finish = async () => {
    if (done) return
    done = true
    buffered = []
    if (connection === undefined) return
    const held = connection
    try {
      if (held.state !== "dead") await pull(true)
    } catch {
      // The subscription ends with its connection anyway.
    } finally {
      Connection.use(held, -1)
    }
  }
  let pending: Promise<Batch> | undefined = pull(false)
  // Read by `next`; unread, its failure must not go unhandled.
  pending.catch(() => {})
  const iterator: AsyncIterableIterator<Plane.ServerNotification> & AsyncDisposable = {
    next: async () => {
      while (buffered.length === 0 && !done) {
        const batch = await (pending ?? pull(false)).catch(async (error) => {
          pending = undefined
          await finish()
          throw error
        })
        pending = undefined
        buffered = batch.items
        if (batch.done) {
          done = true
          if (connection !== undefined) Connection.use(connection, -1)
          connection = undefined
        }
      }
      const value = buffered.shift()
      return value === undefined ? { done: true, value: undefined } : { done: false, value }
    },
    return: async () => {
      await finish()
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: finish
  }
  return iterator
}

/** Nothing connects until the first call. @internal */
export const make = (options: Options): Plane.Plane => {
  const client: Client = {
    path: options.path,
    maxFrameBytes: options.maxFrameBytes ?? Connection.defaultMaxFrameBytes,
    current: undefined,
    nextId: 0,
    disposed: false
  }
  return {
    request: (call) => request(client, call),
    open: (prepared) => openOn(client, prepared),
    status: (workerId) => lifecycle(client, "status", workerId, {}) as Promise<Plane.WorkerStatus>,
    cancel: (workerId, requestId) => lifecycle(client, "cancel", workerId, { requestId }).then(() => undefined),
    close: (workerId, budgetMs) =>
      lifecycle(
        client,
        "close",
        workerId,
        budgetMs === undefined ? {} : { deadline: Operations.deadlineOf(budgetMs) }
      ) as Promise<Plane.WorkerStatus>,
    events: (workerId, capacity) => events(client, workerId, capacity),
    dispose: async () => {
      client.disposed = true
      const current = client.current
      client.current = undefined
      if (current !== undefined && current.state !== "dead") Connection.drop(current, "connection_lost")
    }
  }
}

// C18: a spill directory would be the listener host's.
const openOn = (client: Client, { open, budgetMs }: Plane.PreparedOpen): Promise<string> => {
  if (open.spill !== undefined) {
    return Promise.reject(
      new InvalidInput({
        where: "config",
        path: "options.onTooLarge.spill",
        message: spillRefused,
        delivery: "not_sent"
      })
    )
  }
  return run(client, {
    kind: "lifecycle",
    workerId: "",
    tag: "open",
    payload: {
      config: open.config,
      ...(budgetMs === undefined ? {} : { deadline: Operations.deadlineOf(budgetMs) }),
      ...(open.isolation === undefined || open.isolation === "thread" ? {} : { isolation: open.isolation }),
      ...(open.maxOldGenerationSizeMb === undefined ? {} : { maxOldGenerationSizeMb: open.maxOldGenerationSizeMb }),
      ...(open.tools === undefined ? {} : { tools: open.tools })
    }
  }) as Promise<string>
}
