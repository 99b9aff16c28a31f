// C24: a server may echo a request in its error body.
import type { FailureKind } from "@mcp-worker/core/McpWorkerError"
import * as Redact from "@mcp-worker/core/Redact"
import { InsufficientScopeError, SdkHttpError, SseError } from "@modelcontextprotocol/client"
import * as HttpAuth from "./httpAuth.js"

/** @internal */
export class HttpTransportError extends Error {
  override readonly name = "HttpTransportError"
  constructor(
    message: string,
    readonly kind: Extract<FailureKind, "transport" | "session_expired" | "unauthorized">,
    readonly status: number | undefined
  ) {
    super(message)
  }
}

/** @internal */
export interface Described {
  readonly message: string
  readonly status: number | undefined
  /** A 404 for a request that carried a session. */
  readonly expired: boolean
  readonly unreachable: boolean
  /** C34 */
  readonly unauthorized: boolean
}

const maxDetail = 200

/** @internal */
export const clip = (text: string, secrets: ReadonlyArray<string>): string => {
  // Redacted before cutting, so no secret leaks in part.
  const line = Redact.redact(text, secrets).replace(/\s+/g, " ").trim()
  if (line.length <= maxDetail) return line
  const cut = /[\ud800-\udbff]/.test(line[maxDetail - 1]!) ? maxDetail - 1 : maxDetail
  return `${line.slice(0, cut)}…`
}

/** @internal */
export const networkCode = (error: unknown): string | undefined => {
  if (!(error instanceof TypeError)) return undefined
  const cause: unknown = (error as { cause?: unknown }).cause
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  return typeof code === "string" ? code : error.message === "fetch failed" ? "fetch failed" : undefined
}

/** @internal */
export const brokeMidway = (error: unknown): boolean => {
  const code = networkCode(error)
  return code !== undefined && code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN"
}

export const expiredMessage = "the server no longer knows this session (HTTP 404); close the worker and open a new one"

const answered = (status: number, detail: string): string =>
  detail === "" ? `the server answered HTTP ${status}` : `the server answered HTTP ${status}: ${detail}`

const sseStatus = /^Error POSTing to endpoint \(HTTP (\d{3})\)/

/** @internal */
export const describe = (error: unknown, hasSession: boolean, secrets: ReadonlyArray<string>): Described => {
  const plain = (message: string, status?: number): Described => ({
    message,
    status,
    expired: status === 404 && hasSession,
    unreachable: false,
    // C34
    unauthorized: status === 401 || status === 403
  })
  if (error instanceof HttpAuth.AuthorizationError) return { ...plain(error.message), unauthorized: true }
  // C34: it has no status.
  if (error instanceof InsufficientScopeError) return plain(clip(error.message, secrets), 403)
  if (error instanceof SdkHttpError) {
    const status = error.status > 0 ? error.status : undefined
    if (status === 404 && hasSession) return plain(expiredMessage, 404)
    const detail = clip(error.message.replace(/^(Streamable HTTP error: )?(Error POSTing to endpoint: )?/, ""), secrets)
    return plain(status === undefined ? detail : answered(status, detail), status)
  }
  if (error instanceof SseError) {
    // The GET stream carries no session id.
    const status = typeof error.code === "number" ? error.code : undefined
    const detail = error.message.replace(/^SSE error: /, "")
    const message =
      status !== undefined
        ? `the SSE stream failed with HTTP ${status}`
        : detail === "" || detail === "undefined"
          ? "the server closed the SSE stream"
          : `the SSE stream failed: ${clip(detail, secrets)}`
    return { message, status, expired: false, unreachable: false, unauthorized: false }
  }
  const code = networkCode(error)
  if (code !== undefined) {
    return {
      message: `cannot reach the server (${clip(code, secrets)})`,
      status: undefined,
      expired: false,
      unreachable: true,
      unauthorized: false
    }
  }
  if (error instanceof Error) {
    const match = sseStatus.exec(error.message)
    if (match !== null) {
      const status = Number(match[1])
      return status === 404 && hasSession
        ? plain(expiredMessage, 404)
        : plain(answered(status, clip(error.message.slice(match[0].length + 1), secrets)), status)
    }
    if (error.name === "AbortError") return plain("the request was aborted")
    return plain(clip(error.message, secrets))
  }
  return plain(clip(String(error), secrets))
}

/** @internal */
export const toError = (described: Described): HttpTransportError =>
  new HttpTransportError(
    described.message,
    described.unauthorized ? "unauthorized" : described.expired ? "session_expired" : "transport",
    described.status
  )
