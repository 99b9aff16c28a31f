/**
 * The owner side of one worker: it creates, uses and finally closes one MCP SDK `Client`, serves one
 * request at a time from the host, and reports failures. Platform independent: the transport (stdio process
 * job, HTTP) is built by the platform package and handed in.
 *
 * @since 0.1.0
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { CallToolResultSchema, ErrorCode, ListToolsResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { CleanupSummary, FailureKind } from "./McpWorkerError.js"
import { emptyCleanup, OpenFailed, ResultTooLarge, ServerError, WorkerFailed } from "./McpWorkerError.js"
import * as OwnerProtocol from "./OwnerProtocol.js"
import * as Redact from "./Redact.js"
import * as ServerConfig from "./ServerConfig.js"
import { displayString } from "./WorkerStatus.js"

/**
 * A started connection's transport, as the platform built it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerTransport {
  readonly transport: Transport
  /** The server's root process id, or `null` (HTTP). */
  readonly pid: number | null
  /** Ends everything the connection started and counts what is left. Called after the client closed. */
  readonly stop: (budgetMs: number) => Effect.Effect<CleanupSummary>
  /**
   * Why the transport went away, when it did: exit code, signal, redacted stderr tail. Waits up to `waitMs` for a
   * server that is going away to finish exiting and writing, so that its last words are not lost.
   */
  readonly exitInfo: (waitMs: number) => Effect.Effect<ExitInfo>
  /**
   * The raw JSON-RPC response line of the request that was just answered, when the transport kept it: handed
   * on as is, it spares serializing the parsed result again (and it is the server's result unchanged).
   */
  readonly takeResponseLine?: () => string | undefined
  /** Classifies a transport-level error (e.g. an expired HTTP session), when the platform knows better. */
  readonly classify?: (error: unknown) => FailureKind | undefined
}

/**
 * Reported by a transport through `onerror` when a message from the server passed the config's `maxResultBytes`:
 * the transport skips the rest of it unread, and the owner fails the request in flight with `ResultTooLarge`.
 *
 * @since 0.1.0
 * @category models
 */
export class OversizedMessage extends Error {
  override readonly name = "OversizedMessage"
  constructor(
    readonly bytes: number,
    readonly limit: number
  ) {
    super(`a message from the server passed maxResultBytes (${bytes} > ${limit} bytes)`)
  }
}

/**
 * How a server process ended, as far as the transport knows.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitInfo {
  readonly exitCode?: number
  readonly signal?: string
  readonly stderrTail?: string
}

/**
 * Builds the transport for a config. Called once per owner.
 *
 * @since 0.1.0
 * @category models
 */
export type TransportFactory = (
  config: ServerConfig.ServerConfig,
  context: { readonly workerId: string; readonly marker: string; readonly onSpawned: (pid: number) => void }
) => Effect.Effect<OwnerTransport, OpenFailed>

/**
 * How the owner talks to its host on the data plane.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerPort {
  readonly post: (message: OwnerProtocol.OwnerMessageEncoded) => void
}

/**
 * The owner of one connection: the control-plane handlers and the data-plane message handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Owner {
  readonly open: (request: OwnerProtocol.Open) => Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed>
  readonly close: (budgetMs: number) => Effect.Effect<CleanupSummary>
  /** Handles one raw data-plane message from the host. Never throws. */
  readonly onMessage: (raw: unknown) => void
}

const clientInfo = { name: "mcp-worker", version: "0.1.0" }

// The SDK arms its own timer per request; it must never cut in before the host's budget does.
const sdkTimeoutSlackMs = 5_000

const openFailureStopMs = 2_000

// How long a failed open waits for a server that is going away to exit and flush its stderr.
const exitInfoWaitMs = 1_000

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : "unknown error"

const isSchemaError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues)

// A schema error lists where the result broke the protocol; only paths and codes, never values.
const schemaErrorSummary = (error: unknown): string => {
  const issues = (error as { issues: Array<{ path?: Array<unknown>; code?: unknown }> }).issues
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "(root)"}: ${String(issue.code ?? "invalid")}`)
    .join("; ")
}

/**
 * Creates the owner of one connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly port: OwnerPort; readonly factory: TransportFactory }): Owner => {
  const { factory, port } = options
  let phase: "idle" | "opening" | "ready" | "failed" | "closed" = "idle"
  let workerId = ""
  let client: Client | undefined
  let owned: OwnerTransport | undefined
  let failure: { kind: FailureKind; message: string } | undefined
  let secrets: ReadonlyArray<string> = []
  const inflight = new Map<string, AbortController>()

  const fail = (kind: FailureKind, message: string) => {
    if (phase !== "ready") return
    phase = "failed"
    failure = { kind, message }
    port.post({ _tag: "Failed", kind, message, at: new Date().toISOString() })
  }

  const classify = (error: unknown): FailureKind | undefined => owned?.classify?.(error)

  const post = (message: OwnerProtocol.OwnerMessageEncoded) => port.post(message)

  // The connection is gone: the recorded failure if there is one, else what the caller saw.
  const connectionGone = (delivery: "not_sent" | "unknown", kind: FailureKind, message: string) =>
    new WorkerFailed({
      workerId,
      kind: failure?.kind ?? kind,
      message: failure?.message ?? message,
      delivery
    })

  const postFailure = (requestId: string, error: ServerError | WorkerFailed | ResultTooLarge) =>
    post(OwnerProtocol.encodeOwnerMessage({ _tag: "Failure", requestId, error }))

  const onSettled = (requestId: string, controller: AbortController, exit: Either.Either<unknown, unknown>) => {
    inflight.delete(requestId)
    // A cancelled request has already been answered by the host; its late outcome is dropped here.
    if (controller.signal.aborted) return
    if (Either.isRight(exit)) {
      const line = owned?.takeResponseLine?.()
      post(
        line !== undefined
          ? { _tag: "Success", requestId, result: line, envelope: true }
          : { _tag: "Success", requestId, result: JSON.stringify(exit.right), envelope: false }
      )
      return
    }
    const error = exit.left
    const kind = classify(error)
    if (kind !== undefined) {
      fail(kind, Redact.redact(errorText(error), secrets))
      return postFailure(
        requestId,
        new WorkerFailed({ workerId, kind, message: failure!.message, delivery: "unknown" })
      )
    }
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed && phase === "ready") {
      return postFailure(
        requestId,
        new ServerError({
          workerId,
          requestId,
          code: error.code,
          message: Redact.redact(error.message, secrets),
          ...(error.data !== undefined ? { data: error.data } : {})
        })
      )
    }
    if (phase === "ready") {
      // The connection is still up: the result broke the protocol's schema, or the request failed in the
      // client; neither is a dead connection (C15 is for a connection that is gone, which the transport
      // reports by closing).
      const message = isSchemaError(error)
        ? `the server's result does not match the MCP schema (${schemaErrorSummary(error)})`
        : `the request failed in the client: ${Redact.redact(errorText(error), secrets)}`
      return postFailure(requestId, new ServerError({ workerId, requestId, code: ErrorCode.InternalError, message }))
    }
    postFailure(requestId, connectionGone("unknown", "transport", "the connection closed"))
  }

  // The answer in flight passed the limit: the transport skips the rest of it, and the request ends here. Aborting
  // makes the client forget the request (its late outcome is dropped) and tell the server it is no longer wanted.
  const refuseOversized = (error: OversizedMessage) => {
    for (const [requestId, controller] of inflight) {
      inflight.delete(requestId)
      postFailure(
        requestId,
        new ResultTooLarge({ workerId, requestId, bytes: error.bytes, limit: error.limit, delivery: "unknown" })
      )
      controller.abort("too_large")
    }
  }

  const startRequest = (message: typeof OwnerProtocol.RequestMessage.Type) => {
    const { requestId } = message
    if (phase !== "ready" || client === undefined) {
      return postFailure(requestId, connectionGone("not_sent", "closing", "the connection is not ready"))
    }
    const controller = new AbortController()
    inflight.set(requestId, controller)
    const params = JSON.parse(message.params)
    const requestOptions = {
      signal: controller.signal,
      timeout: Math.min(message.timeoutMs + sdkTimeoutSlackMs, ServerConfig.maxTimeoutMs)
    }
    // Plain requests, not `callTool`/`listTools`: those make the client read tool descriptions (output
    // schemas it validates results against, task requirements it refuses calls for), and descriptions and
    // results are untrusted data the library does not interpret (C25). Results come back as the server sent
    // them; the schema applied is the protocol's own.
    const promise = client.request(
      { method: message.method, params },
      message.method === "tools/call" ? CallToolResultSchema : ListToolsResultSchema,
      requestOptions
    )
    promise.then(
      (result) => onSettled(requestId, controller, Either.right(result)),
      (error) => onSettled(requestId, controller, Either.left(error))
    )
  }

  const onMessage = (raw: unknown): void => {
    const decoded = OwnerProtocol.decodeHostMessage(raw)
    if (Either.isLeft(decoded)) return
    const message = decoded.right
    switch (message._tag) {
      case "Request":
        return startRequest(message)
      case "Cancel": {
        // Only the exact request named; an id that is no longer in flight changes nothing.
        const controller = inflight.get(message.requestId)
        if (controller !== undefined) {
          inflight.delete(message.requestId)
          controller.abort(message.reason)
        }
        return
      }
    }
  }

  // Why initialize did not complete. A server that went away is given a moment to finish exiting, so that its exit
  // status and last stderr lines are reported however early it died (C28).
  const openFailure = (transport: OwnerTransport, error: unknown, elapsedMs: number) =>
    Effect.gen(function* () {
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout
      const info = yield* transport.exitInfo(timedOut ? 0 : exitInfoWaitMs)
      const exited = info.exitCode !== undefined || info.signal !== undefined
      const stage = timedOut ? "timeout" : exited || error instanceof McpError ? "initialize" : "connect"
      const message = timedOut
        ? `the server did not complete initialize within ${elapsedMs} ms`
        : exited
          ? `the server exited before completing initialize (${info.signal ?? `code ${info.exitCode}`})`
          : Redact.redact(errorText(error), secrets)
      return yield* new OpenFailed({
        stage,
        message,
        ...(info.exitCode !== undefined ? { exitCode: info.exitCode } : {}),
        ...(info.signal !== undefined ? { signal: info.signal } : {}),
        ...(info.stderrTail !== undefined && info.stderrTail.length > 0 ? { stderrTail: info.stderrTail } : {})
      })
    })

  const open = (request: OwnerProtocol.Open): Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed> =>
    Effect.gen(function* () {
      phase = "opening"
      workerId = request.workerId
      // The host validated the config already; a broken wire form is a protocol fault of the host.
      const config = yield* Effect.mapError(
        ServerConfig.fromWire(request.config),
        (error) => new OpenFailed({ stage: "thread", message: error.message })
      )
      secrets = ServerConfig.secretsOf(config)
      owned = yield* factory(config, {
        workerId: request.workerId,
        marker: request.marker,
        onSpawned: (pid) => post({ _tag: "Spawned", pid })
      })
      const negotiated: { protocolVersion: string | null } = { protocolVersion: null }
      const transport = owned.transport
      const setProtocolVersion = transport.setProtocolVersion?.bind(transport)
      transport.setProtocolVersion = (version: string) => {
        negotiated.protocolVersion = version
        setProtocolVersion?.(version)
      }
      const c = new Client(clientInfo, { capabilities: {} })
      client = c
      const started = Date.now()
      yield* Effect.tryPromise({
        try: () => c.connect(transport, { timeout: Math.min(request.timeoutMs, ServerConfig.maxTimeoutMs) }),
        catch: (error) => error
      }).pipe(Effect.catchAll((error) => openFailure(owned!, error, Date.now() - started)))
      c.onclose = () => fail("transport", "the connection closed")
      c.onerror = (error: Error) => {
        if (error instanceof OversizedMessage) return refuseOversized(error)
        // Stray lines and late responses to cancelled requests are reported here; they are not fatal.
        const kind = classify(error)
        if (kind !== undefined) fail(kind, Redact.redact(errorText(error), secrets))
      }
      phase = "ready"
      const server = c.getServerVersion()
      return {
        pid: owned.pid,
        protocolVersion: negotiated.protocolVersion,
        server: server ? { name: displayString(server.name), version: displayString(server.version) } : null
      }
    }).pipe(
      Effect.tapError(() =>
        Effect.suspend(() => {
          phase = "failed"
          // A failed open leaves nothing running (C4); the host re-scans after the thread is gone.
          return owned === undefined ? Effect.void : owned.stop(openFailureStopMs)
        })
      )
    )

  const close = (budgetMs: number): Effect.Effect<CleanupSummary> =>
    Effect.gen(function* () {
      phase = "closed"
      for (const controller of inflight.values()) controller.abort("interrupted")
      inflight.clear()
      const started = Date.now()
      if (client !== undefined) {
        const c = client
        c.onclose = () => {}
        c.onerror = () => {}
        yield* Effect.promise(() => c.close()).pipe(
          Effect.timeoutOption(Math.max(1, Math.floor(budgetMs / 2))),
          Effect.catchAllCause(() => Effect.succeed(Option.none()))
        )
      }
      if (owned === undefined) return emptyCleanup
      const left = Math.max(1, budgetMs - (Date.now() - started))
      return yield* owned.stop(left)
    })

  return { open, close, onMessage }
}
