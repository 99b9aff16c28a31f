import type * as ServerConfig from "@mcp-worker/core/ServerConfig"
import {
  type JSONRPCMessage,
  SSEClientTransport,
  type StreamableHTTPClientTransport,
  type TransportSendOptions
} from "@modelcontextprotocol/client"
import * as Data from "effect/Data"

/** @internal */
export type TransportName = ServerConfig.HttpTransport

/** @internal */
export type Inner = StreamableHTTPClientTransport | SSEClientTransport

/** @internal */
export const sendOn = (
  inner: Inner,
  message: JSONRPCMessage,
  options: TransportSendOptions | undefined
): Promise<void> =>
  inner instanceof SSEClientTransport || options === undefined
    ? inner.send(message)
    : inner.send(message, {
        ...(options.resumptionToken !== undefined ? { resumptionToken: options.resumptionToken } : {}),
        ...(options.onresumptiontoken !== undefined ? { onresumptiontoken: options.onresumptiontoken } : {}),
        ...(options.requestSignal !== undefined ? { requestSignal: options.requestSignal } : {}),
        ...(options.onRequestStreamEnd !== undefined ? { onRequestStreamEnd: options.onRequestStreamEnd } : {}),
        ...(options.headers !== undefined ? { headers: options.headers } : {})
      })

/** @internal */
export const isInitialize = (message: JSONRPCMessage): boolean => "method" in message && message.method === "initialize"

// A legacy answer is followed by `initialize`, which may still fall back to SSE.
/** @internal */
export const isDiscover = (message: JSONRPCMessage): boolean =>
  "method" in message && message.method === "server/discover"

// Each message carries its version.
/** @internal */
export const isModern = (message: JSONRPCMessage): boolean => {
  const params = "params" in message ? (message.params as { _meta?: Record<string, unknown> } | undefined) : undefined
  return typeof params?._meta?.["io.modelcontextprotocol/protocolVersion"] === "string"
}

/** @internal */
export const requestIdOf = (message: JSONRPCMessage): string | number | undefined =>
  "method" in message && "id" in message && message.method !== "subscriptions/listen" ? message.id : undefined

// `active` is `undefined` until the initialize POST decides. `Closed` keeps `inner` so `stop` can end the session.
/** @internal */
export type Phase = Data.TaggedEnum<{
  New: {}
  Starting: { readonly inner: Inner; readonly active: TransportName | undefined }
  Open: { readonly inner: Inner; readonly active: TransportName | undefined }
  Probing: { readonly inner: Inner; readonly active: TransportName | undefined }
  /** Nothing can end its session. */
  Dead: { readonly inner: Inner; readonly active: TransportName | undefined }
  Closed: { readonly inner: Inner | undefined; readonly active: TransportName | undefined }
}>

/** @internal */
export const Phase = Data.taggedEnum<Phase>()

/** @internal */
export type Attached = Data.TaggedEnum.Value<Phase, "Starting" | "Open" | "Probing">

export const isAttached = (phase: Phase): phase is Attached =>
  phase._tag === "Starting" || phase._tag === "Open" || phase._tag === "Probing"

/** @internal */
export const innerOf = (phase: Phase): Inner | undefined => (phase._tag === "New" ? undefined : phase.inner)

/** @internal */
export const activeOf = (phase: Phase): TransportName | undefined => (phase._tag === "New" ? undefined : phase.active)

export const decide = (phase: Phase, active: TransportName): Phase =>
  Phase.$match(phase, {
    New: () => phase,
    Starting: ({ inner }) => Phase.Starting({ inner, active }),
    Open: ({ inner }) => Phase.Open({ inner, active }),
    Probing: ({ inner }) => Phase.Probing({ inner, active }),
    Dead: () => phase,
    Closed: ({ inner }) => Phase.Closed({ inner, active })
  })
