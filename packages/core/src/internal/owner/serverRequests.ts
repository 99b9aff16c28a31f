/**
 * The requests a server sends its client (elicitation, sampling, roots) and the questions of an interactive OAuth
 * flow: each handed to the host, which answers with its handlers (`ServerReply`).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import type * as Owner from "../../Owner.js"
import type * as OwnerProtocol from "../../OwnerProtocol.js"
import type { Machine } from "./state.js"

/**
 * The capabilities the client declares: only those the host has a handler for, so a server is never told of a
 * feature nobody answers.
 *
 * @internal
 */
export const capabilitiesOf = (handlers: ReadonlyArray<string>) => ({
  ...(handlers.includes("elicitation") ? { elicitation: { form: { applyDefaults: true } } } : {}),
  ...(handlers.includes("sampling") ? { sampling: {} } : {}),
  ...(handlers.includes("roots") ? { roots: {} } : {})
})

/**
 * Hands a server's request to the host and answers the server with what the host's handler answered. A request
 * the server cancels (or a connection that closes) stops waiting here; the host's late answer is dropped.
 */
const askHost = (
  machine: Machine,
  method: OwnerProtocol.ServerMethod,
  params: unknown,
  signal: AbortSignal
): Promise<any> =>
  new Promise((resolve, reject) => {
    const serverRequestId = String(++machine.nextServerRequest)
    const onAbort = () => {
      machine.serverRequests.delete(serverRequestId)
      reject(new McpError(ErrorCode.RequestTimeout, "the request was cancelled"))
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
    machine.port.post({ _tag: "ServerRequest", serverRequestId, method, params: JSON.stringify(params ?? {}) })
  })

/** @internal */
export const answerServerRequests = (machine: Machine, client: Client, handlers: ReadonlyArray<string>): void => {
  if (handlers.includes("elicitation")) {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      askHost(machine, "elicitation/create", request.params, extra.signal)
    )
  }
  if (handlers.includes("sampling")) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      askHost(machine, "sampling/createMessage", request.params, extra.signal)
    )
  }
  if (handlers.includes("roots")) {
    client.setRequestHandler(ListRootsRequestSchema, (request, extra) =>
      askHost(machine, "roots/list", request.params, extra.signal)
    )
  }
}

/** The host's answer to a server's request that still waits; a late one is dropped. @internal */
export const onServerReply = (machine: Machine, message: typeof OwnerProtocol.ServerReplyMessage.Type): void => {
  const waiting = machine.serverRequests.get(message.serverRequestId)
  if (waiting === undefined) return
  machine.serverRequests.delete(message.serverRequestId)
  if (message.result !== undefined) return waiting.resolve(JSON.parse(message.result))
  return waiting.reject(
    new McpError(message.error?.code ?? ErrorCode.InternalError, message.error?.message ?? "no answer")
  )
}

/** A closing connection answers nobody any more: every question still waiting for the host fails. @internal */
export const rejectServerRequests = (machine: Machine): void => {
  for (const waiting of machine.serverRequests.values()) {
    waiting.reject(new McpError(ErrorCode.ConnectionClosed, "the connection is closing"))
  }
  machine.serverRequests.clear()
}

// Nothing aborts the wait for the user's authorization but a close, which rejects every question to the host.
const authorizing = new AbortController().signal

/** @internal */
export const interactiveOAuth = (machine: Machine, settings: string): Owner.InteractiveOAuth => ({
  settings,
  authorize: (authorizationUrl) =>
    askHost(machine, "oauth/authorize", { authorizationUrl }, authorizing).then((result: unknown) => {
      const code = typeof result === "object" && result !== null ? (result as { code?: unknown }).code : undefined
      if (typeof code !== "string" || code.length === 0) throw new Error("the host's OAuth client gave no code")
      return code
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
