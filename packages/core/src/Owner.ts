/**
 * The owner side of one worker: it creates, uses and finally closes one MCP SDK `Client`, serves one request at a
 * time (from the host, or in an owner thread straight from a remote caller), and reports failures. Platform
 * independent: the transport (stdio process job, HTTP) is built by the platform package and handed in.
 *
 * @since 0.1.0
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolResultSchema,
  CompleteResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  EmptyResultSchema,
  ErrorCode,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListRootsRequestSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ReadResourceResultSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { CleanupSummary, FailureKind } from "./McpWorkerError.js"
import {
  DeadlineExceeded,
  DeliveryUnknown,
  emptyCleanup,
  InvalidInput,
  type McpWorkerError,
  OpenFailed,
  ResultTooLarge,
  ServerError,
  WorkerBusy,
  WorkerFailed
} from "./McpWorkerError.js"
import type { SavedResult } from "./Operations.js"
import * as JsonValue from "./JsonValue.js"
import * as OwnerProtocol from "./OwnerProtocol.js"
import * as Redact from "./Redact.js"
import * as ServerConfig from "./ServerConfig.js"
import * as WorkerId from "./WorkerId.js"
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
   * The raw JSON-RPC response of the request that was just answered, when the transport kept it: its line and the
   * `result` member parsed from it (before any schema read it). Handed on as is, it spares serializing the parsed
   * result again, and it is the server's result unchanged.
   */
  readonly takeResponse?: () => { readonly line: string; readonly result: unknown } | undefined
  /**
   * Starts a `saveTo`: the response to the next request sent goes to `path` as it arrives (its result, raw), never
   * whole into memory; the request then answers with the save's summary. `Left` is why the file cannot be made.
   * Transports without it refuse `saveTo`.
   */
  readonly saveResponse?: (path: string) => Either.Either<ResponseSave, string>
  /** Classifies a transport-level error (e.g. an expired HTTP session), when the platform knows better. */
  readonly classify?: (error: unknown) => FailureKind | undefined
  /**
   * Every secret the transport holds, the config's and those it obtained since (access tokens): what never appears
   * in a message. Without it, the config's secrets.
   */
  readonly secrets?: () => ReadonlyArray<string>
  /** An authorization is waiting for the user (C34): an open that runs out of time then failed at `authorization`. */
  readonly waitingForUser?: () => boolean
}

/**
 * A pending `saveTo` of a transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseSave {
  /** The summary, once the result was written whole and moved into place. */
  readonly summary: () => SavedResult | undefined
  /** Gives the save up: nothing of it is left. Harmless once done. */
  readonly discard: () => void
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
  context: {
    readonly workerId: string
    readonly marker: string
    readonly onSpawned: (pid: number) => void
    /** The host's interactive OAuth client, when it has one (C34). */
    readonly oauth?: InteractiveOAuth | undefined
  }
) => Effect.Effect<OwnerTransport, OpenFailed>

/**
 * The host's interactive OAuth client as the owner sees it: its plain-data settings, and the one thing only the host
 * can do, taking the user through an authorization URL to the code its redirect brings back.
 *
 * @since 0.1.0
 * @category models
 */
export interface InteractiveOAuth {
  /** JSON text: `redirectUrl`, `clientMetadata`, `clientMetadataUrl?`, `clientInformation?`. */
  readonly settings: string
  /** The authorization code, or a rejection when the user's authorization did not come. */
  readonly authorize: (authorizationUrl: string) => Promise<string>
  /** The tokens the host's client keeps for this server (JSON plain data), if it keeps any. */
  readonly loadTokens: (serverUrl: string) => Promise<unknown>
  /** Hands newly obtained tokens to the host's client to keep; a failure to keep them is not the owner's. */
  readonly saveTokens: (serverUrl: string, tokens: unknown) => Promise<void>
}

/**
 * How the owner talks to its host on the data plane.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerPort {
  readonly post: (message: OwnerProtocol.OwnerMessageEncoded) => void
  /**
   * A host in the owner's own thread (`McpClient`) takes a request's raw result as a value: nothing crosses a
   * thread, so the result is neither written as text nor parsed again. Without it, a `Success` message is posted.
   */
  readonly postResult?: ((requestId: string, result: unknown) => void) | undefined
  /**
   * An owner thread posts the success of a request that names a `replyTo` straight to that caller: `result` is JSON
   * text, the result itself or (`envelope`) the server's whole response line. The host is then told `Delivered`.
   * Without it (an owner process, which has no channel to other threads), every success goes to the host.
   */
  readonly postDirect?: ((replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean) => void) | undefined
  /**
   * An owner thread refuses a remote caller's request that reached it directly (`Owner.startDirect`) on that
   * caller's own channel: busy, not ready, past its deadline, or unreadable. Nothing was sent.
   */
  readonly postDirectFailure?: ((replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) => void) | undefined
  /**
   * Handles at once the host's messages already waiting on the data port. An owner thread runs it before it refuses a
   * remote caller's request as busy: the host may have ended the request in flight (a timeout, a `cancel`) and told
   * the caller so, whose next request then travels on another channel and can be read first.
   */
  readonly readAhead?: (() => void) | undefined
}

/**
 * A remote caller's request that reached an owner thread straight from the caller's thread (on the owner's own
 * channel), checked there: the owner decides busy, names the request and tells the host (`Started`) before sending it.
 *
 * @since 0.1.0
 * @category models
 */
export interface DirectRequest {
  /** The caller's reply channel, and the call's number there. */
  readonly from: string
  readonly callId: number
  readonly method: OwnerProtocol.Method
  /** JSON text of a plain object, checked in the calling thread. */
  readonly params: string
  /** The caller's deadline, `Date.now()` epoch ms (one clock for every thread of the process). */
  readonly deadline: number
  readonly saveTo?: string | undefined
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
  /** Takes or refuses a remote caller's request that reached this owner thread directly. Never throws. */
  readonly startDirect: (request: DirectRequest) => void
  /** The remote caller of `callId` stopped waiting: its request, if still in flight, is cancelled at the server. */
  readonly interruptDirect: (from: string, callId: number) => void
}

/**
 * Creates the owner of one connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: { readonly port: OwnerPort; readonly factory: TransportFactory }): Owner => {
  const machine: Machine = {
    state: State.Idle(),
    port: options.port,
    serverRequests: new Map(),
    nextServerRequest: 0,
    direct: undefined,
    started: 0
  }
  return {
    open: (request) => open(machine, options.factory, request),
    close: (budgetMs) => close(machine, budgetMs),
    onMessage: (raw) => onMessage(machine, raw),
    startDirect: (request) => startDirect(machine, request),
    interruptDirect: (from, callId) => interruptDirect(machine, from, callId)
  }
}

// internal

const clientInfo = { name: "mcp-worker", version: "0.1.0" }

// The SDK arms its own timer per request; it must never cut in before the host's budget does.
const sdkTimeoutSlackMs = 5_000

// The protocol's own result schema of each method the host may send: results are checked against the protocol,
// never against what a server declared about itself (C25).
const resultSchemas = {
  "tools/list": ListToolsResultSchema,
  "tools/call": CallToolResultSchema,
  "resources/list": ListResourcesResultSchema,
  "resources/templates/list": ListResourceTemplatesResultSchema,
  "resources/read": ReadResourceResultSchema,
  "resources/subscribe": EmptyResultSchema,
  "resources/unsubscribe": EmptyResultSchema,
  "prompts/list": ListPromptsResultSchema,
  "prompts/get": GetPromptResultSchema,
  "completion/complete": CompleteResultSchema,
  ping: EmptyResultSchema
} satisfies Record<OwnerProtocol.Method, unknown>

const openFailureStopMs = 2_000

// How long a failed open waits for a server that is going away to exit and flush its stderr.
const exitInfoWaitMs = 1_000

/** Why the connection is gone, as reported to the host once. */
interface Failure {
  readonly kind: FailureKind
  readonly message: string
}

/**
 * The abort of one request, given to the SDK's `request` as its `signal`. The client reads only what this has:
 * `aborted`, `reason`, `throwIfAborted()` and one `abort` listener, added once per request and never removed. A
 * Node `AbortController` with that listener costs 13–22 µs to make on Node 20, more than the rest of the owner's
 * own work on a call; this costs well under 1 µs. Aborting is idempotent and runs each listener once.
 */
class RequestAbort {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> | undefined = undefined

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) (this.listeners ??= []).push(listener)
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1
    if (index !== -1) this.listeners!.splice(index, 1)
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners !== undefined) for (const listener of listeners) listener()
  }

  /** What the SDK's request options type it as. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }
}

/** A connection that completed initialize, and the requests in flight over it. */
interface Connection {
  readonly workerId: string
  /** What never appears in a message; it grows as tokens are obtained. */
  readonly secrets: () => ReadonlyArray<string>
  readonly transport: OwnerTransport
  readonly client: Client
  /** One controller per request, so that a cancel aborts exactly the request it names. */
  readonly inflight: Map<string, RequestAbort>
  /** The requests that asked for progress, by the progress token they carry (their request id). */
  readonly progress: Map<string, RequestAbort>
}

/**
 * Where the owner is. `Opening` and `Closed` keep whatever the open built (a transport, a client): `close` ends
 * it in any state, and closing again is harmless. A failed open ends as `Closed`, having stopped its transport.
 */
type State = Data.TaggedEnum<{
  Idle: {}
  Opening: {
    readonly workerId: string
    readonly transport: OwnerTransport | undefined
    readonly client: Client | undefined
  }
  Ready: { readonly connection: Connection }
  Failed: { readonly connection: Connection; readonly failure: Failure }
  Closed: {
    readonly workerId: string
    readonly failure: Failure | undefined
    readonly transport: OwnerTransport | undefined
    readonly client: Client | undefined
  }
}>

const State = Data.taggedEnum<State>()

/** The owner's one mutable cell, the port it reports on, and the server's requests waiting for the host. */
interface Machine {
  state: State
  readonly port: OwnerPort
  readonly serverRequests: Map<
    string,
    { readonly resolve: (result: unknown) => void; readonly reject: (e: Error) => void }
  >
  nextServerRequest: number
  /** The last remote caller's request taken directly, to find it by its caller's call number. */
  direct: { readonly from: string; readonly callId: number; readonly requestId: string } | undefined
  /** How many remote callers' requests were taken directly (each announced to the host by a `Started`). */
  started: number
}

const workerIdOf: (state: State) => string = State.$match({
  Idle: () => "",
  Opening: ({ workerId }) => workerId,
  Ready: ({ connection }) => connection.workerId,
  Failed: ({ connection }) => connection.workerId,
  Closed: ({ workerId }) => workerId
})

const failureOf = (state: State): Failure | undefined =>
  state._tag === "Failed" || state._tag === "Closed" ? state.failure : undefined

const inflightOf = (state: State): Map<string, RequestAbort> | undefined =>
  state._tag === "Ready" || state._tag === "Failed" ? state.connection.inflight : undefined

/** What `close` has to end. */
const heldBy = (
  state: State
): { readonly transport: OwnerTransport | undefined; readonly client: Client | undefined } =>
  State.$match(state, {
    Idle: () => ({ transport: undefined, client: undefined }),
    Opening: ({ client, transport }) => ({ transport, client }),
    Ready: ({ connection }) => connection,
    Failed: ({ connection }) => connection,
    Closed: ({ client, transport }) => ({ transport, client })
  })

const closedFrom = (state: State): State =>
  State.Closed({ workerId: workerIdOf(state), failure: failureOf(state), ...heldBy(state) })

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

/** The connection failed: recorded and reported once, from `Ready`. Returns the failure on record. */
const fail = (machine: Machine, kind: FailureKind, message: string): Failure => {
  const state = machine.state
  if (state._tag !== "Ready") return failureOf(state) ?? { kind, message }
  const failure = { kind, message }
  machine.state = State.Failed({ connection: state.connection, failure })
  machine.port.post({ _tag: "Failed", kind, message, at: new Date().toISOString() })
  return failure
}

// The connection is gone: the recorded failure if there is one, else what the caller saw.
const connectionGone = (state: State, delivery: "not_sent" | "unknown", kind: FailureKind, message: string) => {
  const failure = failureOf(state)
  return new WorkerFailed({
    workerId: workerIdOf(state),
    kind: failure?.kind ?? kind,
    message: failure?.message ?? message,
    delivery
  })
}

const postFailure = (
  port: OwnerPort,
  requestId: string,
  error: ServerError | WorkerFailed | ResultTooLarge | InvalidInput | WorkerBusy | DeliveryUnknown
) => port.post(OwnerProtocol.encodeOwnerMessage({ _tag: "Failure", requestId, error }))

const onMessage = (machine: Machine, raw: unknown): void => {
  const decoded = OwnerProtocol.decodeHostMessage(raw)
  if (Either.isLeft(decoded)) return
  const message = decoded.right
  switch (message._tag) {
    case "Request":
      return startRequest(machine, message)
    case "Cancel": {
      const cancelled = cancel(machine.state, message.requestId, message.reason)
      if (message.confirm === true) machine.port.post({ _tag: "CancelAnswer", requestId: message.requestId, cancelled })
      return
    }
    case "ServerReply": {
      const waiting = machine.serverRequests.get(message.serverRequestId)
      if (waiting === undefined) return
      machine.serverRequests.delete(message.serverRequestId)
      if (message.result !== undefined) return waiting.resolve(JSON.parse(message.result))
      return waiting.reject(
        new McpError(message.error?.code ?? ErrorCode.InternalError, message.error?.message ?? "no answer")
      )
    }
  }
}

// The capabilities the client declares: only those the host has a handler for, so a server is never told of a
// feature nobody answers.
const capabilitiesOf = (handlers: ReadonlyArray<string>) => ({
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

const answerServerRequests = (machine: Machine, client: Client, handlers: ReadonlyArray<string>): void => {
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

// Nothing aborts the wait for the user's authorization but a close, which rejects every question to the host.
const authorizing = new AbortController().signal

const interactiveOAuth = (machine: Machine, settings: string): InteractiveOAuth => ({
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

// The notifications handed on to the host, which counts them and gives them to whoever listens (`events`).
const notificationSchemas = [
  ToolListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  PromptListChangedNotificationSchema,
  LoggingMessageNotificationSchema
] as const

const forwardNotifications = (machine: Machine, client: Client): void => {
  for (const schema of notificationSchemas) {
    client.setNotificationHandler(schema, (notification) => {
      machine.port.post({
        _tag: "Notification",
        method: notification.method,
        params: JSON.stringify(notification.params ?? {})
      })
    })
  }
}

// Plain data of the server's progress notification: what the protocol defines, nothing else it may carry.
const progressOf = (progress: {
  progress: number
  total?: number | undefined
  message?: string | undefined
}): OwnerProtocol.Progress => ({
  progress: progress.progress,
  ...(typeof progress.total === "number" ? { total: progress.total } : {}),
  ...(typeof progress.message === "string" ? { message: progress.message } : {})
})

/**
 * Progress is matched to its request here, not by the SDK's `onprogress`: the SDK hands a notification to its
 * handler a microtask later but forgets the request's handler as soon as the response is read, so the last progress
 * of a server that answers in the same write is lost. Here a request's token is forgotten only once its outcome was
 * handled, which is after every notification read before its response.
 */
const forwardProgress = (machine: Machine, connection: Connection): void => {
  connection.client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
    const requestId = String(notification.params.progressToken)
    const controller = connection.progress.get(requestId)
    if (controller === undefined || controller.aborted) return
    machine.port.post({ _tag: "Progress", requestId, progress: progressOf(notification.params) })
  })
}

// The request's params with its progress token, which is its request id (unique in this owner).
const withProgressToken = (params: Record<string, unknown>, requestId: string) => ({
  ...params,
  _meta: {
    ...(typeof params._meta === "object" && params._meta !== null ? params._meta : {}),
    progressToken: requestId
  }
})

// The request in flight, if any: one at a time (C8). The host sends its next request only once the last one ended on
// its side, which it tells this owner first (a `Cancel`) when it ended it early.
const busyWith = (connection: Connection): string | undefined => {
  for (const requestId of connection.inflight.keys()) return requestId
  return undefined
}

const startRequest = (machine: Machine, message: typeof OwnerProtocol.RequestMessage.Type): void => {
  const { requestId } = message
  const state = machine.state
  if (state._tag !== "Ready") {
    return postFailure(
      machine.port,
      requestId,
      connectionGone(state, "not_sent", "closing", "the connection is not ready")
    )
  }
  const { connection } = state
  // A remote caller's request taken directly, whose `Started` the host had not read when it sent this one: the host
  // counts this one refused as soon as it reads that `Started`, even if that request has ended since.
  const busy = (message.seen ?? 0) < machine.started ? machine.direct?.requestId : busyWith(connection)
  if (busy !== undefined) {
    return postFailure(
      machine.port,
      requestId,
      new WorkerBusy({ workerId: connection.workerId, requestId: busy, delivery: "not_sent" })
    )
  }
  send(machine, connection, message, JSON.parse(message.params))
}

/**
 * A remote caller's request, straight from its thread: refused on its own channel (nothing sent), or named, announced
 * to the host (`Started`, before anything is written to the server) and sent with the success going back to the
 * caller directly.
 */
const startDirect = (machine: Machine, request: DirectRequest): void => {
  const replyTo = { channel: request.from, callId: request.callId }
  const refuse = (error: McpWorkerError) => machine.port.postDirectFailure?.(replyTo, error)
  let state = machine.state
  if (state._tag === "Ready" && busyWith(state.connection) !== undefined) {
    // The host may have ended the request in flight and told its caller so: its `Cancel` waits on the data port.
    machine.port.readAhead?.()
    state = machine.state
  }
  if (state._tag !== "Ready") {
    return refuse(connectionGone(state, "not_sent", "closing", "the connection is not ready"))
  }
  const { connection } = state
  const { workerId } = connection
  const busy = busyWith(connection)
  if (busy !== undefined) return refuse(new WorkerBusy({ workerId, requestId: busy, delivery: "not_sent" }))
  const params = parseParams(request.params)
  if (params === undefined) {
    const message = "the request params must be the JSON text of a plain object"
    return refuse(new InvalidInput({ where: "arguments", path: "params", message, delivery: "not_sent" }))
  }
  const left = request.deadline - Date.now()
  // The deadline passed between the caller's thread and this one: never sent (C9, C22a).
  if (!(left > 0)) return refuse(new DeadlineExceeded({ workerId, delivery: "not_sent" }))
  const requestId = WorkerId.makeRequestId()
  machine.direct = { from: request.from, callId: request.callId, requestId }
  machine.started++
  machine.port.post({ _tag: "Started", requestId, method: request.method, replyTo, deadline: request.deadline })
  send(
    machine,
    connection,
    {
      requestId,
      method: request.method,
      timeoutMs: Math.min(left, ServerConfig.maxTimeoutMs),
      saveTo: request.saveTo,
      progress: undefined,
      replyTo
    },
    params
  )
}

const parseParams = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return JsonValue.isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

// The caller's interruption arrives on the same channel as its request, so it cannot overtake it. The host, told by
// the failure, answers the caller.
const interruptDirect = (machine: Machine, from: string, callId: number): void => {
  const direct = machine.direct
  if (direct === undefined || direct.from !== from || direct.callId !== callId) return
  machine.direct = undefined
  const { requestId } = direct
  if (inflightOf(machine.state)?.has(requestId) !== true) return
  cancel(machine.state, requestId, "interrupted")
  postFailure(
    machine.port,
    requestId,
    new DeliveryUnknown({ workerId: workerIdOf(machine.state), requestId, reason: "interrupted", delivery: "unknown" })
  )
}

/** Sends one request that was taken: from the host (its `RequestMessage`) or straight from a remote caller. */
const send = (
  machine: Machine,
  connection: Connection,
  message: Omit<typeof OwnerProtocol.RequestMessage.Type, "_tag" | "params">,
  parsed: Record<string, unknown>
): void => {
  const { requestId } = message
  const save = message.saveTo === undefined ? undefined : startSave(connection.transport, message.saveTo)
  if (save !== undefined && Either.isLeft(save)) return postFailure(machine.port, requestId, save.left)
  const controller = new RequestAbort()
  connection.inflight.set(requestId, controller)
  // A cancelled, interrupted or closed request leaves no file behind.
  if (save !== undefined) controller.addEventListener("abort", save.right.discard)
  // Only when the caller asked does the request carry a progress token. Progress never extends the budget.
  const params = message.progress === true ? withProgressToken(parsed, requestId) : parsed
  if (message.progress === true) connection.progress.set(requestId, controller)
  const requestOptions = {
    signal: controller.signal,
    timeout: Math.min(message.timeoutMs + sdkTimeoutSlackMs, ServerConfig.maxTimeoutMs)
  }
  // Plain requests, not `callTool`/`listTools`: those make the client read tool descriptions (output
  // schemas it validates results against, task requirements it refuses calls for), and descriptions and
  // results are untrusted data the library does not interpret (C25). Results come back as the server sent
  // them; the schema applied is the protocol's own.
  const promise = connection.client.request(
    { method: message.method, params },
    resultSchemas[message.method],
    requestOptions
  )
  const saving = save === undefined ? undefined : save.right
  const { replyTo } = message
  promise.then(
    (result) => onSettled(machine, connection, requestId, controller, Either.right(result), saving, replyTo),
    (error) => onSettled(machine, connection, requestId, controller, Either.left(error), saving, replyTo)
  )
}

// The transport makes the file before anything is sent: a failure here means the request was not sent.
const startSave = (transport: OwnerTransport, path: string): Either.Either<ResponseSave, InvalidInput> =>
  Either.mapLeft(
    transport.saveResponse === undefined ? Either.left("saveTo is for stdio servers") : transport.saveResponse(path),
    (message) => new InvalidInput({ where: "arguments", path: "options.saveTo", message, delivery: "not_sent" })
  )

// Only the exact request named; an id that is no longer in flight changes nothing.
const cancel = (state: State, requestId: string, reason: string): boolean => {
  const inflight = inflightOf(state)
  const controller = inflight?.get(requestId)
  if (inflight === undefined || controller === undefined) return false
  inflight.delete(requestId)
  controller.abort(reason)
  return true
}

const onSettled = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  controller: RequestAbort,
  exit: Either.Either<unknown, unknown>,
  save: ResponseSave | undefined,
  replyTo: OwnerProtocol.ReplyTo | undefined
): void => {
  connection.inflight.delete(requestId)
  connection.progress.delete(requestId)
  if (Either.isLeft(exit)) save?.discard()
  // A cancelled request has already been answered by the host; its late outcome is dropped here.
  if (controller.aborted) return
  if (Either.isLeft(exit))
    return postFailure(machine.port, requestId, requestError(machine, connection, requestId, exit.left))
  if (save !== undefined) return postSaved(machine.port, connection, requestId, save, replyTo)
  const response = connection.transport.takeResponse?.()
  const { port } = machine
  if (port.postResult !== undefined)
    return port.postResult(requestId, response !== undefined ? response.result : exit.right)
  if (response !== undefined) postSuccess(port, requestId, replyTo, response.line, true)
  else postSuccess(port, requestId, replyTo, JSON.stringify(exit.right), false)
}

// Straight to a caller in another thread when it named itself, and the host only learns that the request ended.
const postSuccess = (
  port: OwnerPort,
  requestId: string,
  replyTo: OwnerProtocol.ReplyTo | undefined,
  result: string,
  envelope: boolean
): void => {
  if (replyTo === undefined || port.postDirect === undefined) {
    return port.post({ _tag: "Success", requestId, result, envelope })
  }
  // The host first: it frees the worker for the caller's next request while the caller reads this one's result.
  port.post({ _tag: "Delivered", requestId })
  port.postDirect(replyTo, result, envelope)
}

// The result went to its file; the answer is the file's summary, which never carries the result itself.
const postSaved = (
  port: OwnerPort,
  connection: Connection,
  requestId: string,
  save: ResponseSave,
  replyTo: OwnerProtocol.ReplyTo | undefined
): void => {
  const summary = save.summary()
  if (summary !== undefined) return postSuccess(port, requestId, replyTo, JSON.stringify(summary), false)
  save.discard()
  const message = "the server's result could not be saved"
  postFailure(
    port,
    requestId,
    new ServerError({ workerId: connection.workerId, requestId, code: ErrorCode.InternalError, message })
  )
}

const requestError = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  error: unknown
): ServerError | WorkerFailed => {
  const { workerId } = connection
  const secrets = connection.secrets()
  const kind = connection.transport.classify?.(error)
  if (kind !== undefined) {
    const failure = fail(machine, kind, Redact.redact(errorText(error), secrets))
    // A request refused for want of authorization was not run by the server (C34).
    return new WorkerFailed({
      workerId,
      kind,
      message: failure.message,
      delivery: kind === "unauthorized" ? "not_sent" : "unknown"
    })
  }
  if (machine.state._tag !== "Ready")
    return connectionGone(machine.state, "unknown", "transport", "the connection closed")
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
    return new ServerError({
      workerId,
      requestId,
      code: error.code,
      message: Redact.redact(error.message, secrets),
      ...(error.data !== undefined ? { data: error.data } : {})
    })
  }
  // The connection is still up: the result broke the protocol's schema, or the request failed in the client;
  // neither is a dead connection (C15 is for a connection that is gone, which the transport reports by closing).
  const message = isSchemaError(error)
    ? `the server's result does not match the MCP schema (${schemaErrorSummary(error)})`
    : `the request failed in the client: ${Redact.redact(errorText(error), secrets)}`
  return new ServerError({ workerId, requestId, code: ErrorCode.InternalError, message })
}

// The answer in flight passed the limit: the transport skips the rest of it, and the request ends here. Aborting
// makes the client forget the request (its late outcome is dropped) and tell the server it is no longer wanted.
const refuseOversized = (port: OwnerPort, connection: Connection, error: OversizedMessage): void => {
  for (const [requestId, controller] of connection.inflight) {
    connection.inflight.delete(requestId)
    postFailure(
      port,
      requestId,
      new ResultTooLarge({
        workerId: connection.workerId,
        requestId,
        bytes: error.bytes,
        limit: error.limit,
        delivery: "unknown"
      })
    )
    controller.abort("too_large")
  }
}

const onClientError = (machine: Machine, connection: Connection, error: Error): void => {
  if (error instanceof OversizedMessage) return refuseOversized(machine.port, connection, error)
  // Stray lines and late responses to cancelled requests are reported here; they are not fatal.
  const kind = connection.transport.classify?.(error)
  if (kind !== undefined) fail(machine, kind, Redact.redact(errorText(error), connection.secrets()))
}

// The version initialize settled on, as the client hands it to the transport.
const recordProtocolVersion = (transport: Transport): { protocolVersion: string | null } => {
  const negotiated: { protocolVersion: string | null } = { protocolVersion: null }
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport)
  transport.setProtocolVersion = (version: string) => {
    negotiated.protocolVersion = version
    setProtocolVersion?.(version)
  }
  return negotiated
}

const open = (
  machine: Machine,
  factory: TransportFactory,
  request: OwnerProtocol.Open
): Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed> =>
  Effect.gen(function* () {
    const { workerId } = request
    machine.state = State.Opening({ workerId, transport: undefined, client: undefined })
    // The host validated the config already; a broken wire form is a protocol fault of the host.
    const config = yield* Effect.mapError(
      ServerConfig.fromWire(request.config),
      (error) => new OpenFailed({ stage: "thread", message: error.message })
    )
    const configured = ServerConfig.secretsOf(config)
    const transport = yield* factory(config, {
      workerId,
      marker: request.marker,
      onSpawned: (pid) => machine.port.post({ _tag: "Spawned", pid }),
      oauth: request.oauth === undefined ? undefined : interactiveOAuth(machine, request.oauth)
    })
    machine.state = State.Opening({ workerId, transport, client: undefined })
    const negotiated = recordProtocolVersion(transport.transport)
    const handlers = request.handlers ?? []
    const client = new Client(clientInfo, { capabilities: capabilitiesOf(handlers) })
    answerServerRequests(machine, client, handlers)
    forwardNotifications(machine, client)
    machine.state = State.Opening({ workerId, transport, client })
    const secrets = transport.secrets ?? (() => configured)
    const started = Date.now()
    yield* Effect.tryPromise({
      try: () =>
        client.connect(transport.transport, { timeout: Math.min(request.timeoutMs, ServerConfig.maxTimeoutMs) }),
      catch: (error) => error
    }).pipe(Effect.catchAll((error) => openFailure(transport, secrets, error, Date.now() - started)))
    const connection: Connection = { workerId, secrets, transport, client, inflight: new Map(), progress: new Map() }
    client.onclose = () => fail(machine, "transport", "the connection closed")
    client.onerror = (error: Error) => onClientError(machine, connection, error)
    forwardProgress(machine, connection)
    machine.state = State.Ready({ connection })
    const server = client.getServerVersion()
    return {
      pid: transport.pid,
      protocolVersion: negotiated.protocolVersion,
      server: server ? { name: displayString(server.name), version: displayString(server.version) } : null
    }
  }).pipe(
    // On failure and on interruption alike (the host gives up on an open that outlives its budget): a failed open
    // leaves nothing running (C4), and nothing that keeps this thread alive; the host re-scans once it is gone.
    Effect.onError(() =>
      Effect.suspend(() => {
        const { transport } = heldBy(machine.state)
        machine.state = closedFrom(machine.state)
        return transport === undefined ? Effect.void : transport.stop(openFailureStopMs)
      })
    )
  )

// Why initialize did not complete. A server that went away is given a moment to finish exiting, so that its exit
// status and last stderr lines are reported however early it died (C28).
const openFailure = (
  transport: OwnerTransport,
  secrets: () => ReadonlyArray<string>,
  error: unknown,
  elapsedMs: number
) =>
  Effect.gen(function* () {
    const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout
    const info = yield* transport.exitInfo(timedOut ? 0 : exitInfoWaitMs)
    const exited = info.exitCode !== undefined || info.signal !== undefined
    const waitedForUser = timedOut && transport.waitingForUser?.() === true
    const stage = waitedForUser
      ? "authorization"
      : timedOut
        ? "timeout"
        : transport.classify?.(error) === "unauthorized"
          ? "authorization"
          : exited || error instanceof McpError
            ? "initialize"
            : "connect"
    const message = waitedForUser
      ? `the user's authorization did not come within ${elapsedMs} ms`
      : timedOut
        ? `the server did not complete initialize within ${elapsedMs} ms`
        : exited
          ? `the server exited before completing initialize (${info.signal ?? `code ${info.exitCode}`})`
          : Redact.redact(errorText(error), secrets())
    return yield* new OpenFailed({
      stage,
      message,
      ...(info.exitCode !== undefined ? { exitCode: info.exitCode } : {}),
      ...(info.signal !== undefined ? { signal: info.signal } : {}),
      ...(info.stderrTail !== undefined && info.stderrTail.length > 0 ? { stderrTail: info.stderrTail } : {})
    })
  })

const close = (machine: Machine, budgetMs: number): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    for (const waiting of machine.serverRequests.values()) {
      waiting.reject(new McpError(ErrorCode.ConnectionClosed, "the connection is closing"))
    }
    machine.serverRequests.clear()
    const previous = machine.state
    const { client, transport } = heldBy(previous)
    machine.state = closedFrom(previous)
    const inflight = inflightOf(previous)
    if (inflight !== undefined) {
      for (const controller of inflight.values()) controller.abort("interrupted")
      inflight.clear()
    }
    const started = Date.now()
    if (client !== undefined) {
      client.onclose = () => {}
      client.onerror = () => {}
      yield* Effect.promise(() => client.close()).pipe(
        Effect.timeoutOption(Math.max(1, Math.floor(budgetMs / 2))),
        Effect.catchAllCause(() => Effect.succeed(Option.none()))
      )
    }
    if (transport === undefined) return emptyCleanup
    const left = Math.max(1, budgetMs - (Date.now() - started))
    return yield* transport.stop(left)
  })
