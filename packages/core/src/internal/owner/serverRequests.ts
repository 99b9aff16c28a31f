/** Server requests and OAuth questions, answered by the host's handlers. */
import { type Client, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import { busyWith, type Machine } from "./state.js"

/** A server is never told of a feature nobody answers. @internal */
export const capabilitiesOf = (handlers: ReadonlyArray<string>) => ({
  ...(handlers.includes("elicitation") ? { elicitation: { form: { applyDefaults: true } } } : {}),
  ...(handlers.includes("sampling") ? { sampling: {} } : {}),
  ...(handlers.includes("roots") ? { roots: {} } : {})
})

// The 2025 SDK's codes.
const requestTimeoutCode = -32001
const connectionClosedCode = -32000

/** The host's late answer to a cancelled request is dropped. @internal */
export const askHost = (
  machine: Machine,
  method: OwnerProtocol.ServerMethod,
  params: unknown,
  signal: AbortSignal
): Promise<any> =>
  new Promise((resolve, reject) => {
    const serverRequestId = String(++machine.nextServerRequest)
    const onAbort = () => {
      machine.serverRequests.delete(serverRequestId)
      reject(new ProtocolError(requestTimeoutCode, "the request was cancelled"))
    }
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    machine.serverRequests.set(serverRequestId, {
      resolve: (result) => {
        signal.removeEventListener("abort", onAbort)
        resolve(result)
      },
      reject: (error) => {
        signal.removeEventListener("abort", onAbort)
        reject(error)
      }
    })
    const state = machine.state
    // C151, C8
    const requestId = state._tag === "Ready" ? busyWith(state.connection) : undefined
    machine.port.post({
      _tag: "ServerRequest",
      serverRequestId,
      method,
      params: JSON.stringify(params ?? {}),
      ...(requestId === undefined ? {} : { requestId })
    })
  })

/** @internal */
export const answerServerRequests = (machine: Machine, client: Client, handlers: ReadonlyArray<string>): void => {
  // C31, C52: the SDK dispatches a modern server's `input_required` rounds here too.
  if (handlers.includes("elicitation")) {
    client.setRequestHandler("elicitation/create", (request, context) =>
      askHost(machine, "elicitation/create", request.params, context.mcpReq.signal)
    )
  }
  if (handlers.includes("sampling")) {
    client.setRequestHandler("sampling/createMessage", (request, context) =>
      askHost(machine, "sampling/createMessage", request.params, context.mcpReq.signal)
    )
  }
  if (handlers.includes("roots")) {
    client.setRequestHandler("roots/list", (request, context) =>
      askHost(machine, "roots/list", request.params, context.mcpReq.signal)
    )
  }
}

/** @internal */
export const onServerReply = (machine: Machine, message: typeof OwnerProtocol.ServerReplyMessage.Type): void => {
  const waiting = machine.serverRequests.get(message.serverRequestId)
  if (waiting === undefined) return
  machine.serverRequests.delete(message.serverRequestId)
  if (message.result !== undefined) return waiting.resolve(JSON.parse(message.result))
  return waiting.reject(
    new ProtocolError(message.error?.code ?? ProtocolErrorCode.InternalError, message.error?.message ?? "no answer")
  )
}

/** @internal */
export const rejectServerRequests = (machine: Machine): void => {
  for (const waiting of machine.serverRequests.values()) {
    waiting.reject(new ProtocolError(connectionClosedCode, "the connection is closing"))
  }
  machine.serverRequests.clear()
}

// Only a close ends the wait for authorization.
const authorizing = new AbortController().signal

/** @internal */
export const interactiveOAuth = (machine: Machine, settings: string): Owner.InteractiveOAuth => ({
  settings,
  authorize: (authorizationUrl) =>
    askHost(machine, "oauth/authorize", { authorizationUrl }, authorizing).then((result: unknown) => {
      const { code, iss } = typeof result === "object" && result !== null ? (result as Record<string, unknown>) : {}
      if (typeof code !== "string" || code.length === 0) throw new Error("the host's OAuth client gave no code")
      return { code, iss: typeof iss === "string" ? iss : undefined }
    }),
  loadTokens: (serverUrl) =>
    askHost(machine, "oauth/tokens", { serverUrl }, authorizing).then(
      (result: unknown) =>
        typeof result === "object" && result !== null ? (result as { tokens?: unknown }).tokens : undefined,
      () => undefined
    ),
  saveTokens: (serverUrl, tokens) =>
    askHost(machine, "oauth/saveTokens", { serverUrl, tokens }, authorizing).then(
      () => undefined,
      () => undefined
    )
})
