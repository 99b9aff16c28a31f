// C3: never reconnects on its own. C21: stop DELETEs the session, then aborts.
import * as Owner from "@mcp-worker/core/protocol/Owner"
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import {
  type FetchLike,
  type JSONRPCMessage,
  type MessageExtraInfo,
  SdkHttpError,
  SSEClientTransport,
  SseError,
  StreamableHTTPClientTransport,
  type Transport,
  type TransportSendOptions
} from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as HttpAuth from "./httpAuth.js"
import {
  activeOf,
  decide,
  type Inner,
  innerOf,
  isAttached,
  isDiscover,
  isInitialize,
  isModern,
  Phase,
  requestIdOf,
  sendOn,
  type TransportName
} from "./httpWire.js"
import { brokeMidway, type Described, describe, HttpTransportError, toError } from "./httpErrors.js"

export { HttpTransportError } from "./httpErrors.js"

/** Without a configured transport, a 4xx to initialize re-sends it once over HTTP+SSE: the only message re-sent. */
class HttpClientTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined

  private phase: Phase = Phase.New()
  private readonly dropped: Array<Inner> = []
  private protocolVersion: string | undefined
  /** Its send tells its failure. */
  private discovering = false
  private modern = false
  private readonly awaiting = new Set<string | number>()
  /** C95 */
  private own: { readonly request: Owner.OwnRequest } | undefined
  private deleteStatus: number | undefined
  private readonly fetch: FetchLike

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
    private readonly configured: TransportName | undefined,
    private readonly secretsOf: () => ReadonlyArray<string>,
    private readonly maxResultBytes: number,
    private readonly ownResultBytes: number,
    private readonly authorizer: HttpAuth.Authorizer | undefined
  ) {
    // C34
    const send: FetchLike = authorizer === undefined ? fetch : authorizer.wrap(fetch)
    // Sees what the SDK hides (a DELETE answered 405 resolves like a 200).
    this.fetch = (input, init) =>
      send(input, init).then((response) => {
        if (init?.method === "DELETE") this.deleteStatus = response.status
        return init?.method === "POST" ? this.limited(response) : response
      })
  }

  get sessionId(): string | undefined {
    const inner = innerOf(this.phase)
    return inner instanceof StreamableHTTPClientTransport ? inner.sessionId : undefined
  }

  async start(): Promise<void> {
    if (this.phase._tag !== "New") throw new Error("the HTTP transport was already started")
    const inner = this.listen(this.configured === "sse" ? this.makeSse() : this.makeStreamable())
    this.phase = Phase.Starting({ inner, active: this.configured })
    await inner.start().then(
      () => this.settle(),
      (error: unknown) => {
        this.settle()
        throw toError(this.describe(error))
      }
    )
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const phase = this.phase
    if (!isAttached(phase)) throw new Error("Not connected")
    this.modern = isModern(message)
    if (isDiscover(message)) {
      this.discovering = true
      return sendOn(phase.inner, message, options)
        .catch((error: unknown) => {
          throw error instanceof SdkHttpError ? error : toError(this.describe(error))
        })
        .finally(() => {
          this.discovering = false
        })
    }
    if (phase.active === undefined) {
      if (isInitialize(message) && phase.inner instanceof StreamableHTTPClientTransport) {
        return this.probe(phase.inner, message, options)
      }
      this.phase = decide(phase, "streamable-http")
    }
    return sendOn(phase.inner, message, this.watched(message, options)).catch((error: unknown) => {
      // C54
      if (isModern(message) && requestIdOf(message) !== undefined && brokeMidway(error)) throw new Owner.StreamBroken()
      throw toError(this.describe(error))
    })
  }

  /** C55 */
  get hasPerRequestStream(): boolean {
    return innerOf(this.phase) instanceof StreamableHTTPClientTransport
  }

  async close(): Promise<void> {
    // `stop` still needs the connection to DELETE the session.
    this.markClosed()
  }

  /** C95 */
  ownRequest(request: Owner.OwnRequest): () => void {
    const own = { request }
    this.own = own
    return () => {
      if (this.own === own) this.own = undefined
    }
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version
    innerOf(this.phase)?.setProtocolVersion(version)
  }

  stop(budgetMs: number): Effect.Effect<CleanupSummary> {
    return Effect.gen(this, function* () {
      const started = Date.now()
      this.markClosed()
      const sessionTerminated = yield* Effect.promise(() => this.terminate()).pipe(
        Effect.timeoutOption(Math.max(1, budgetMs)),
        Effect.map(Option.getOrElse(() => false))
      )
      this.authorizer?.stop()
      yield* Effect.promise(() => this.abortAll())
      return {
        activeProcesses: 0,
        signalled: { term: 0, kill: 0 },
        escaped: 0,
        durationMs: Date.now() - started,
        sessionTerminated
      }
    })
  }

  // internal

  /** C54 */
  private watched(
    message: JSONRPCMessage,
    options: TransportSendOptions | undefined
  ): TransportSendOptions | undefined {
    const id = requestIdOf(message)
    if (id === undefined || !isModern(message)) return options
    this.awaiting.add(id)
    options?.requestSignal?.addEventListener("abort", () => this.awaiting.delete(id), { once: true })
    return {
      ...options,
      onRequestStreamEnd: () => {
        options?.onRequestStreamEnd?.()
        if (this.awaiting.delete(id) && isAttached(this.phase)) this.onerror?.(new Owner.StreamBroken())
      }
    }
  }

  /** The owner hears `OversizedMessage` first. */
  private limited(response: Response): Response {
    const body = response.body
    if (body === null) return response
    const own = this.own?.request
    const limit = own === undefined ? this.maxResultBytes : this.ownResultBytes
    let bytes = 0
    const counted = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          bytes += chunk.byteLength
          if (bytes <= limit) return controller.enqueue(chunk)
          const error = new Owner.OversizedMessage(bytes, limit, undefined, own)
          if (isAttached(this.phase)) this.onerror?.(error)
          controller.error(error)
        }
      })
    )
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }

  private makeStreamable(): StreamableHTTPClientTransport {
    return new StreamableHTTPClientTransport(this.url, { requestInit: { headers: this.headers }, fetch: this.fetch })
  }

  private makeSse(): SSEClientTransport {
    // The SDK adds these to the GET too.
    return new SSEClientTransport(this.url, { requestInit: { headers: this.headers }, fetch: this.fetch })
  }

  private listen<I extends Inner>(inner: I): I {
    inner.onmessage = (message: JSONRPCMessage) => {
      if ("id" in message && !("method" in message) && message.id !== undefined) this.awaiting.delete(message.id)
      const phase = this.phase
      if (isAttached(phase) && phase.inner === inner) this.onmessage?.(message)
    }
    inner.onerror = (error) => this.onInnerError(inner, error)
    // The SSE transport closes itself when the server names an endpoint of another origin.
    inner.onclose = () => {
      const phase = this.phase
      if (phase._tag === "Open" && phase.inner === inner) this.markClosed()
    }
    return inner
  }

  private describe(error: unknown): Described {
    return describe(error, this.sessionId !== undefined || activeOf(this.phase) === "sse", this.secretsOf())
  }

  private settle(): void {
    const phase = this.phase
    if (phase._tag === "Starting" || phase._tag === "Probing") {
      this.phase = Phase.Open({ inner: phase.inner, active: phase.active })
    }
  }

  private async probe(
    streamable: StreamableHTTPClientTransport,
    message: JSONRPCMessage,
    options: TransportSendOptions | undefined
  ): Promise<void> {
    this.phase = Phase.Probing({ inner: streamable, active: undefined })
    try {
      const refused = await sendOn(streamable, message, options).then(
        () => undefined,
        (error: unknown) => {
          const status = error instanceof SdkHttpError ? error.status : 0
          // Not a server lacking Streamable HTTP.
          const refused = status >= 400 && status < 500 && status !== 401 && status !== 403
          if (refused && this.phase._tag === "Probing") return status
          throw toError(this.describe(error))
        }
      )
      if (refused === undefined) {
        this.phase = decide(this.phase, "streamable-http")
        return
      }
      await this.fallBack(streamable, message, refused)
    } finally {
      this.settle()
    }
  }

  private async fallBack(
    streamable: StreamableHTTPClientTransport,
    message: JSONRPCMessage,
    refused: number
  ): Promise<void> {
    this.dropped.push(streamable)
    await streamable.close()
    if (this.phase._tag !== "Probing") throw new Error("Not connected")
    const sse = this.listen(this.makeSse())
    this.phase = Phase.Probing({ inner: sse, active: undefined })
    const fallbackFailed = (error: unknown) => {
      const reason = describe(error, false, this.secretsOf())
      throw new HttpTransportError(
        `the server answered the Streamable HTTP initialize with HTTP ${refused}, and the SSE fallback failed: ${reason.message}`,
        "transport",
        reason.status
      )
    }
    await sse.start().catch(fallbackFailed)
    if (this.phase._tag !== "Probing") throw new Error("Not connected")
    if (this.protocolVersion !== undefined) sse.setProtocolVersion(this.protocolVersion)
    this.phase = decide(this.phase, "sse")
    await sse.send(message).catch(fallbackFailed)
  }

  private onInnerError(inner: Inner, error: Error): void {
    const phase = this.phase
    if (phase._tag !== "Open" || phase.inner !== inner) return
    const described = this.describe(error)
    // C54: the SDK would resume a lost SSE stream as a fresh uninitialized session.
    const requestLost = (this.modern && brokeMidway(error)) || this.discovering
    const fatal = !requestLost && (described.expired || described.unreachable || error instanceof SseError)
    if (!fatal) return this.onerror?.(new Error(described.message))
    this.onerror?.(toError(described))
    const attached = isAttached(this.phase)
    this.phase = Phase.Dead({ inner, active: phase.active })
    if (attached) this.onclose?.()
    // The event source arms its reconnect after reporting.
    queueMicrotask(() => void inner.close().catch(() => {}))
  }

  private markClosed(): void {
    const phase = this.phase
    if (!isAttached(phase) && phase._tag !== "New") return
    this.phase = Phase.Closed({ inner: innerOf(phase), active: activeOf(phase) })
    this.onclose?.()
  }

  /** `null`: there was no session. */
  private async terminate(): Promise<boolean | null> {
    const phase = this.phase
    const inner = innerOf(phase)
    if (!(inner instanceof StreamableHTTPClientTransport) || activeOf(phase) !== "streamable-http") return null
    if (inner.sessionId === undefined) return null
    if (phase._tag === "Dead") return false
    return inner.terminateSession().then(
      () => this.deleteStatus !== undefined && this.deleteStatus >= 200 && this.deleteStatus < 300,
      () => false
    )
  }

  private async abortAll(): Promise<void> {
    const inner = innerOf(this.phase)
    const all = inner === undefined ? this.dropped : [...this.dropped, inner]
    await Promise.all(all.map((inner) => inner.close().catch(() => {})))
  }
}

const parseUrl = (text: string): Effect.Effect<URL, OpenFailed> =>
  Effect.gen(function* () {
    const url = URL.canParse(text) ? new URL(text) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return yield* new OpenFailed({
        stage: "connect",
        message: "the server url is not an absolute http: or https: URL"
      })
    }
    if (url.username !== "" || url.password !== "") {
      // fetch refuses such URLs; passing credentials otherwise would be a guess.
      return yield* new OpenFailed({
        stage: "connect",
        message: "the server url carries user:password credentials, which fetch does not send; use headers instead"
      })
    }
    return url
  })

/** @internal */
export const make = (
  config: ServerConfig.HttpConfig,
  context: Parameters<Owner.TransportFactory>[1]
): Effect.Effect<Owner.OwnerTransport, OpenFailed> =>
  Effect.gen(function* () {
    const url = yield* parseUrl(config.url)
    // Not a spread: "__proto__" is a valid header name.
    const headers: Record<string, string> = Object.fromEntries(
      Object.keys(config.headers).map((name) => [name, Redacted.value(config.headers[name]!)])
    )
    const authorizer = HttpAuth.make(config.auth, url, ServerConfig.secretsOf(config), context.oauth)
    const secrets = authorizer === undefined ? () => Object.values(headers) : authorizer.secrets
    const transport = new HttpClientTransport(
      url,
      headers,
      config.transport,
      secrets,
      ServerConfig.maxResultBytesOf(config),
      ServerConfig.ownRequestBytesOf(config),
      authorizer
    )
    return {
      transport,
      secrets,
      waitingForUser: () => authorizer?.waitingForUser() ?? false,
      ownRequest: (request) => transport.ownRequest(request),
      pid: null,
      stop: (budgetMs) => transport.stop(budgetMs),
      exitInfo: () => Effect.succeed({}),
      classify: (error) =>
        error instanceof HttpTransportError
          ? error.kind
          : error instanceof SdkHttpError
            ? error.status === 401 || error.status === 403
              ? "unauthorized"
              : "transport"
            : undefined
    }
  })
