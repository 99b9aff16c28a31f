/**
 * C75: the raw exchange the tasks extension needs; the SDK's codec refuses a flat task.
 * C74: a port lives only while its operation runs.
 */
import type { ConnectedMcpSessionPort, DispatchOptions, JsonRpcResponse } from "@modelcontextprotocol/ext-tasks/client"
import { DispatchError } from "@modelcontextprotocol/ext-tasks/client"
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core"
import { withTaskCapabilityV2 } from "@modelcontextprotocol/ext-tasks/core/v2"
import { type JSONRPCMessage, SdkError, SdkErrorCode, type Transport } from "@modelcontextprotocol/client"
import type { Connection } from "./state.js"

type Json = Record<string, any>

/** As the client sent it at `server/discover`. @internal */
export interface Framing {
  readonly protocolVersion: string
  readonly clientInfo: Json
  readonly clientCapabilities: Json
}

const framed = (framing: Framing, params: Json): Json => {
  const meta = typeof params._meta === "object" && params._meta !== null ? params._meta : {}
  return withTaskCapabilityV2({
    ...params,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": framing.protocolVersion,
      "io.modelcontextprotocol/clientInfo": framing.clientInfo,
      "io.modelcontextprotocol/clientCapabilities": framing.clientCapabilities,
      ...meta
    }
  })
}

const idPrefix = "mcpw-task-"

interface Waiting {
  readonly answer: (response: JsonRpcResponse) => void
}

/** Taken off the transport before the client reads it. */
class RawRequests {
  private next = 0
  private readonly waiting = new Map<string, Waiting>()

  constructor(
    private readonly transport: Transport,
    private readonly framing: Framing
  ) {
    const client = transport.onmessage
    transport.onmessage = (message, extra) => {
      if (!this.take(message)) client?.(message, extra)
    }
  }

  // The client numbers its requests, so a prefixed string id is ours.
  private take(message: JSONRPCMessage): boolean {
    const id = (message as { readonly id?: unknown }).id
    if (typeof id !== "string" || !id.startsWith(idPrefix) || !("result" in message || "error" in message)) return false
    const waiting = this.waiting.get(id)
    if (waiting === undefined) return true
    this.waiting.delete(id)
    waiting.answer(
      "error" in message
        ? { kind: "error", error: message.error as never }
        : { kind: "result", result: message.result as JsonValue }
    )
    return true
  }

  private cancelled(requestId: string, why: unknown): JSONRPCMessage {
    const reason = why instanceof Error ? why.message : String(why)
    const params = framed(this.framing, { requestId, reason })
    return { jsonrpc: "2.0", method: "notifications/cancelled", params } as JSONRPCMessage
  }

  /** C10, C55. The owner's light abort is no DOM `AbortSignal`, so signals are never combined. */
  send(method: string, params: Json, signals: ReadonlyArray<AbortSignal>, timeoutMs: number, headers: Json) {
    const id = `${idPrefix}${++this.next}`
    const stream = this.transport.hasPerRequestStream === true ? new AbortController() : undefined
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const end = (why: unknown) => {
        if (!this.waiting.delete(id)) return
        settle()
        if (stream !== undefined) stream.abort(why)
        else this.transport.send(this.cancelled(id, why)).catch(() => {})
        reject(why)
      }
      const aborts = signals.map((signal) => [signal, () => end(signal.reason)] as const)
      const timer = setTimeout(() => end(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out")), timeoutMs)
      const settle = () => {
        clearTimeout(timer)
        for (const [signal, onAbort] of aborts) signal.removeEventListener("abort", onAbort)
      }
      this.waiting.set(id, {
        answer: (response) => {
          settle()
          resolve(response)
        }
      })
      for (const [signal, onAbort] of aborts) signal.addEventListener("abort", onAbort, { once: true })
      const request = { jsonrpc: "2.0", id, method, params: framed(this.framing, params) } as JSONRPCMessage
      const sending = stream === undefined ? { headers } : { requestSignal: stream.signal, headers }
      this.transport.send(request, sending).catch((error) => {
        if (!this.waiting.delete(id)) return
        settle()
        reject(error)
      })
      for (const [signal, onAbort] of aborts) if (signal.aborted) onAbort()
    })
  }
}

const rawOf = new WeakMap<Connection, RawRequests>()

/** @internal */
export interface RequestOptions {
  readonly signal: AbortSignal
  readonly timeout: number
  readonly headers?: Record<string, string>
}

/** @internal */
export interface OperationPort extends ConnectedMcpSessionPort {
  readonly end: () => void
}

/** @internal */
export const operationPort = (connection: Connection, framing: Framing, options: RequestOptions): OperationPort => {
  let raw = rawOf.get(connection)
  if (raw === undefined) {
    raw = new RawRequests(connection.transport.transport, framing)
    rawOf.set(connection, raw)
  }
  const sender = raw
  let ended = false
  const none = () => () => {}
  return {
    endpointId: connection.workerId,
    taskCapabilities: { generation: "v2", capabilities: {} },
    get invalidated() {
      return ended
    },
    end: () => {
      ended = true
    },
    dispatch: (request: JsonValue, dispatch?: DispatchOptions) => {
      // C74
      if (ended || options.signal.aborted) return Promise.reject(new DispatchError("the task operation ended"))
      const { method, params } = request as { readonly method: string; readonly params?: Json }
      const signals = dispatch?.signal === undefined ? [options.signal] : [options.signal, dispatch.signal]
      const headers = { ...options.headers, ...dispatch?.context?.headers }
      return sender.send(method, params ?? {}, signals, options.timeout, headers)
    },
    onServerRequest: none,
    onNotification: none,
    onInvalidated: none
  }
}
