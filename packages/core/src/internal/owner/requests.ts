/**
 * The requests the owner sends its server, one at a time: taken from the host (or, in an owner thread, straight from
 * a remote caller, `direct.ts`), sent as plain requests checked against the result schema of their `Operations`
 * entry, cancelled exactly, and answered to whoever sent them.
 */
import { ProtocolError, ProtocolErrorCode, SdkError, type StandardSchemaV1 } from "@modelcontextprotocol/client"
import * as Either from "effect/Either"
import {
  DeliveryUnknown,
  type InputRoundsExceeded,
  InvalidInput,
  ResultTooLarge,
  ServerError,
  TaskEnded,
  type UnusableResult,
  WorkerBusy,
  WorkerFailed
} from "../../McpWorkerError.js"
import * as Operations from "../../Operations.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Redact from "../../Redact.js"
import * as ResultFile from "../../ResultFile.js"
import { maxTimeoutMs } from "../config/normalize.js"
import * as Checks from "../ownerProtocol/checks.js"
import * as ToolFilter from "../toolFilter.js"
import {
  errorText,
  isSchemaError,
  OversizedMessage,
  schemaErrorSummary,
  StreamBroken,
  TaskEndedWithout,
  unusableOf
} from "./errors.js"
import * as Idle from "./idle.js"
import { listen, withProgressToken } from "./notifications.js"
import * as ParamHeaders from "./paramHeaders.js"
import { withTraceContext } from "./traceMeta.js"
import { onServerReply } from "./serverRequests.js"
import {
  busyWith,
  cancel,
  cancelDirect,
  type Connection,
  connectionGone,
  type DirectInFlight,
  fail,
  type Machine,
  type Modern,
  type Port,
  postFailure,
  RequestAbort,
  secondsSince,
  takeDirect
} from "./state.js"
import * as Tasks from "./tasks.js"
import * as TasksExtension from "./tasksExtension.js"

// The SDK arms its own timer per request; it must never cut in before the host's budget does.
const sdkTimeoutSlackMs = 5_000

// The protocol's own result schema of each method, read off the operation table: results are checked against the
// protocol, never against what a server declared about itself (C25).
// A task start shares `tools/call` with `callTool`; its schema is chosen by its params (`Tasks.isStart`).
const resultSchemas = Object.fromEntries(
  Object.values(Operations.requests)
    .filter((operation) => operation !== Operations.requests.startTask)
    .map((operation) => [operation.method, operation.result])
) as Readonly<Record<OwnerProtocol.Method, StandardSchemaV1>>

// The caller's budget is run by its caller (the host) or by this owner (a direct request); the SDK's own timer only
// backs it up, later.
const sdkTimeoutOf = (message: Taken): number =>
  Math.min(Math.max(0, message.deadline - Date.now()) + sdkTimeoutSlackMs, maxTimeoutMs)

/** What a request carries once taken, from the host's `RequestMessage` or from a remote caller. @internal */
export type Taken = Omit<typeof OwnerProtocol.RequestMessage.Type, "_tag" | "params">

/** The data plane's handler of `machine`. @internal */
export const messageHandler =
  (machine: Machine) =>
  (raw: unknown): void =>
    onMessage(machine, raw)

/** Handles one raw data-plane message from the host. Never throws. @internal */
export const onMessage = (machine: Machine, raw: unknown): void => {
  const decoded = Checks.decodeHostMessage(raw)
  if (Either.isLeft(decoded)) return
  const message = decoded.right
  switch (message._tag) {
    case "Request":
      return startRequest(machine, message)
    case "Cancel": {
      const { requestId, reason } = message
      if (message.confirm !== true) return void cancel(machine.state, requestId, reason)
      // The host's `cancel` of a request taken directly: the host answers its caller after the `cancel`'s own
      // answer, on the channel both travel, so a Promise caller has its `cancel` resolved first (C12).
      const direct = cancelDirect(machine, requestId)
      if (direct !== undefined) {
        return machine.port.post({ _tag: "CancelAnswer", requestId, cancelled: true, replyTo: direct.replyTo })
      }
      machine.port.post({ _tag: "CancelAnswer", requestId, cancelled: cancel(machine.state, requestId, reason) })
      return
    }
    case "ServerReply":
      return onServerReply(machine, message)
    case "Sync":
      machine.port.flush?.()
      return machine.port.post({ _tag: "Synced", syncId: message.syncId })
  }
}

/** The host's request: refused when the owner is not ready or busy, else sent. @internal */
export const startRequest = (machine: Machine, message: typeof OwnerProtocol.RequestMessage.Type): void => {
  const { requestId } = message
  const state = machine.state
  if (state._tag !== "Ready") {
    return postFailure(machine, requestId, connectionGone(state, "not_sent", "closing", "the connection is not ready"))
  }
  const { connection } = state
  const busy = machine.direct?.requestId ?? busyWith(connection)
  if (busy !== undefined) {
    return postFailure(
      machine,
      requestId,
      new WorkerBusy({ workerId: connection.workerId, requestId: busy, delivery: "not_sent" })
    )
  }
  send(machine, connection, message, JSON.parse(message.params))
}

/** Sends one request that was taken: from the host (its `RequestMessage`) or straight from a remote caller. @internal */
export const send = (
  machine: Machine,
  connection: Connection,
  message: Taken,
  parsed: Record<string, unknown>,
  listed = false
): void => {
  const { requestId } = message
  // Every path to the server passes here (the host's requests, a remote caller's direct ones): a tool the worker does
  // not offer is refused before anything is written, whatever the caller's thread or process (C59).
  if (message.method === "tools/call" && connection.tools !== undefined) {
    if (!ToolFilter.allowsCompiled(connection.tools, parsed.name)) {
      return postFailure(machine, requestId, outsideFilter())
    }
  }
  if (!listed && Tasks.mustList(connection, message.method, parsed)) {
    return Tasks.listThen(connection, requestId, sdkTimeoutOf(message), {
      send: () => send(machine, connection, message, parsed, true),
      fail: (error) => postFailure(machine, requestId, Tasks.listingFailed(machine, connection, requestId, error))
    })
  }
  const taskRefusal = Tasks.refusal(connection, message.method, parsed)
  if (taskRefusal !== undefined) return postFailure(machine, requestId, taskRefusal)
  const known = connection.modern?.params
  const headers =
    known !== undefined && message.method === "tools/call" ? ParamHeaders.ofCall(known, parsed) : undefined
  if (headers !== undefined && Either.isLeft(headers)) return postFailure(machine, requestId, excludedTool())
  const save = message.saveTo === undefined ? undefined : startSave(connection.transport, message.saveTo)
  if (save !== undefined && Either.isLeft(save)) return postFailure(machine, requestId, save.left)
  const spill = startSpill(connection, message, parsed)
  if (spill !== undefined && Either.isLeft(spill)) return postFailure(machine, requestId, spill.left)
  const controller = new RequestAbort()
  connection.inflight.set(requestId, controller)
  // A cancelled, interrupted or closed request leaves no file behind.
  if (save !== undefined) controller.addEventListener("abort", save.right.discard)
  if (spill !== undefined) controller.addEventListener("abort", spill.right.discard)
  // Only when the caller asked, or gave an idle budget (C121), does the request carry a progress token. Progress never
  // extends the whole budget.
  const progressed =
    message.progress === true || message.idleMs !== undefined ? withProgressToken(parsed, requestId) : parsed
  // C83: the server's parent is the owner's span of the request, else the caller's.
  const params =
    message.trace === undefined
      ? progressed
      : withTraceContext(progressed, machine.port.spanOf?.(requestId) ?? message.trace)
  if (message.progress === true) connection.progress.set(requestId, controller)
  if (message.idleMs !== undefined) Idle.watch(machine, connection, requestId, message.idleMs, controller)
  const requestOptions = {
    signal: controller.signal,
    timeout: sdkTimeoutOf(message),
    ...(headers?.right !== undefined ? { headers: headers.right } : {})
  }
  // Plain requests, not `callTool`/`listTools`: those make the client read tool descriptions (output
  // schemas it validates results against, task requirements it refuses calls for), and descriptions and
  // results are untrusted data the library does not interpret (C25). Results come back as the server sent
  // them; the schema applied is the protocol's own.
  const schema = Tasks.isStart(message.method, parsed) ? Tasks.createdSchema : resultSchemas[message.method]
  const sent =
    (connection.modern !== undefined
      ? (TasksExtension.send(machine, connection, message.method, params, requestOptions) ??
        modernOnly(connection, connection.modern, message.method, params, requestOptions))
      : undefined) ?? connection.client.request({ method: message.method, params }, schema, requestOptions)
  // What the tools listed declare about tasks (C72); a task's id stays out of the errors about it (C71).
  const promise =
    message.method === "tools/list"
      ? sent.then((result) => (Tasks.learn(connection.taskSupport, result), result))
      : message.method.startsWith("tasks/")
        ? sent.catch((error) => Tasks.failedWait(connection, message.method, parsed, error, requestOptions))
        : connection.modern !== undefined && message.method === "tools/call"
          ? sent.catch((error) => Promise.reject(TasksExtension.needsTask(message.method, parsed, error)))
          : sent
  const file = save !== undefined ? save.right : spill !== undefined ? spill.right : undefined
  const listing = message.method === "tools/list" ? listingOf(connection) : undefined
  promise.then(
    (result) => onSettled(machine, connection, requestId, controller, Either.right(result), file, listing),
    (error) => onSettled(machine, connection, requestId, controller, Either.left(error), file, listing)
  )
}

// The tool's name is the caller's data: the message says why, never which (C24).
const outsideFilter = (): InvalidInput =>
  new InvalidInput({
    where: "arguments",
    path: "name",
    message: "this worker does not offer that tool (the tools filter of its open)",
    delivery: "not_sent"
  })

const excludedTool = (): InvalidInput =>
  new InvalidInput({
    where: "arguments",
    path: "name",
    message: "the server's definition of that tool declares x-mcp-header invalidly, so it was left out of tools/list",
    delivery: "not_sent"
  })

/** How a `tools/list` result is read before it is answered: the tools filter (C59), the header rules (C62). */
interface Listing {
  readonly filter: ToolFilter.Compiled | undefined
  readonly known: ParamHeaders.Known | undefined
}

const listingOf = (connection: Connection): Listing | undefined => {
  const known = connection.modern?.params
  return connection.tools === undefined && known === undefined ? undefined : { filter: connection.tools, known }
}

// The result as the caller gets it; `undefined` when it stands as the server sent it.
const listed = (listing: Listing, result: unknown): unknown => {
  const valid = listing.known === undefined ? undefined : ParamHeaders.excludeInvalid(listing.known, result)
  if (listing.filter !== undefined) return ToolFilter.filterList(listing.filter, valid ?? result)
  return valid
}

/**
 * The operations a 2026-07-28 server has no method for, done the way that revision does them: a resource subscription
 * is part of the connection's subscriptions/listen filter (C57), answered once the server acknowledged the new
 * stream; `ping` is a `server/discover`, which every modern server answers. `undefined`: a plain request.
 */
const modernOnly = (
  connection: Connection,
  modern: Modern,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>,
  options: { readonly signal: AbortSignal; readonly timeout: number }
): Promise<unknown> | undefined => {
  if (method === "ping") {
    return connection.client.discover(options).then(() => {
      // The discover line is not this request's result: the transport's raw copy of it is dropped.
      connection.transport.takeResponse?.()
      return {}
    })
  }
  if (method !== "resources/subscribe" && method !== "resources/unsubscribe") return undefined
  const uri = typeof params.uri === "string" ? params.uri : undefined
  if (uri === undefined) return undefined
  if (method === "resources/subscribe") modern.subscribed.add(uri)
  else modern.subscribed.delete(uri)
  return listen(connection, modern).then(() => ({}))
}

// The transport makes the file before anything is sent: a failure here means the request was not sent.
const startSave = (transport: Owner.OwnerTransport, path: string): Either.Either<Owner.ResponseSave, InvalidInput> =>
  Either.mapLeft(
    transport.saveResponse === undefined ? Either.left("saveTo is for stdio servers") : transport.saveResponse(path),
    (message) => new InvalidInput({ where: "arguments", path: "options.saveTo", message, delivery: "not_sent" })
  )

const onSettled = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  controller: RequestAbort,
  exit: Either.Either<unknown, unknown>,
  file: Owner.ResponseSave | Owner.ResponseSpill | undefined,
  listing: Listing | undefined
): void => {
  connection.inflight.delete(requestId)
  connection.progress.delete(requestId)
  Idle.ended(connection, requestId)
  if (Either.isLeft(exit)) file?.discard()
  // A cancelled request has already been answered by the host; its late outcome is dropped here.
  if (controller.aborted) return
  if (Either.isLeft(exit))
    return postFailure(machine, requestId, requestError(machine, connection, requestId, exit.left))
  const { port } = machine
  if (file !== undefined && !("limit" in file)) return postSaved(machine, connection, requestId, file)
  // A spilled result is answered by its file's summary; a result within the limit, as any other.
  const spilled = file === undefined ? undefined : spilledAnswer(file)
  if (spilled !== undefined) {
    if (port.postResult !== undefined) return port.postResult(requestId, spilled)
    return postSuccess(machine, requestId, JSON.stringify(spilled), false, spilled)
  }
  const response = connection.transport.takeResponse?.()
  // A tools/list with only the offered tools (C59) that are validly declared (C62): no longer the server's line.
  const changed =
    listing === undefined ? undefined : listed(listing, response !== undefined ? response.result : exit.right)
  if (changed !== undefined) {
    if (port.postResult !== undefined) return port.postResult(requestId, changed)
    return postSuccess(machine, requestId, JSON.stringify(changed), false, changed)
  }
  if (port.postResult !== undefined)
    return port.postResult(requestId, response !== undefined ? response.result : exit.right)
  if (response !== undefined) postSuccess(machine, requestId, response.line, true, response.result)
  else postSuccess(machine, requestId, JSON.stringify(exit.right), false, exit.right)
}

// Straight to a remote caller when this owner took its request directly, else to the host.
const postSuccess = (machine: Machine, requestId: string, result: string, envelope: boolean, value: unknown): void => {
  const direct = takeDirect(machine, requestId)
  if (direct === undefined) return machine.port.post({ _tag: "Success", requestId, result, envelope })
  observeSuccess(machine.port, direct, value)
  machine.port.postDirect!(direct.replyTo, result, envelope, requestId)
}

// What is counted of a success the host does not see (C80): `isError`, and a spill's size. Never the result itself.
const observeSuccess = (port: Port, direct: DirectInFlight, value: unknown): void => {
  if (port.observe === undefined) return
  const spill = Array.isArray(value) ? ResultFile.answerOf(value) : undefined
  const spilled = ResultFile.isSpilled(spill) ? spill : undefined
  const read = (spilled ?? value) as { readonly isError?: unknown } | null
  const isError = typeof read === "object" && read !== null && read.isError === true
  port.observe(direct.method, isError ? "is_error" : "result", "delivered", secondsSince(direct.sentAt), spilled?.bytes)
}

// The result went to its file; the answer is the file's summary, which never carries the result itself.
const postSaved = (machine: Machine, connection: Connection, requestId: string, save: Owner.ResponseSave): void => {
  const summary = save.summary()
  if (summary !== undefined) return postSuccess(machine, requestId, JSON.stringify(summary), false, summary)
  save.discard()
  const message = "the server's result could not be saved"
  postFailure(
    machine,
    requestId,
    new ServerError({ workerId: connection.workerId, requestId, code: ProtocolErrorCode.InternalError, message })
  )
}

const requestError = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  error: unknown
): ServerError | WorkerFailed | InputRoundsExceeded | UnusableResult | DeliveryUnknown | TaskEnded => {
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
  // A modern HTTP exchange that broke: the request's outcome is unknown, the worker goes on (C54).
  if (error instanceof StreamBroken) {
    return new DeliveryUnknown({ workerId, requestId, reason: "stream_broken", delivery: "unknown" })
  }
  if (error instanceof TaskEndedWithout) {
    const { state, statusMessage, code } = error
    return new TaskEnded({
      workerId,
      requestId,
      state,
      ...(statusMessage === undefined ? {} : { statusMessage: Redact.redact(statusMessage, secrets) }),
      ...(code === undefined ? {} : { code })
    })
  }
  if (error instanceof ProtocolError) {
    return new ServerError({
      workerId,
      requestId,
      code: error.code,
      message: Redact.redact(error.message, secrets),
      ...(error.data !== undefined ? { data: error.data } : {})
    })
  }
  const unusable = error instanceof SdkError ? unusableOf(workerId, requestId, error) : undefined
  if (unusable !== undefined) return unusable
  // The connection is still up: the result broke the protocol's schema, or the request failed in the client;
  // neither is a dead connection (C15 is for a connection that is gone, which the transport reports by closing).
  const message = isSchemaError(error)
    ? `the server's result does not match the MCP schema (${schemaErrorSummary(error)})`
    : `the request failed in the client: ${Redact.redact(errorText(error), secrets)}`
  // C116: a result the schema refused was the server's answer; a failure in the client may have come before it.
  const delivery = isSchemaError(error) ? "delivered" : "unknown"
  return new ServerError({ workerId, requestId, code: ProtocolErrorCode.InternalError, message, delivery })
}

// The answer in flight passed the limit: the transport skips the rest of it, and the request ends here. Aborting
// makes the client forget the request (its late outcome is dropped) and tell the server it is no longer wanted. Past
// the owner's own bound while its tool listing was in flight, the caller's call was not sent (C95).
const refuseOversized = (machine: Machine, connection: Connection, error: OversizedMessage): void => {
  for (const [requestId, controller] of connection.inflight) {
    connection.inflight.delete(requestId)
    const why = `its answer passed the owner's bound for its own requests (${error.bytes} > ${error.limit} bytes)`
    postFailure(
      machine,
      requestId,
      error.ownRequest !== undefined
        ? Tasks.preflightFailed(connection, requestId, why)
        : new ResultTooLarge({
            workerId: connection.workerId,
            requestId,
            bytes: error.bytes,
            limit: error.limit,
            delivery: "unknown",
            ...(error.spillFailed === undefined ? {} : { spillFailed: error.spillFailed })
          })
    )
    controller.abort("too_large")
  }
}

// A modern HTTP request whose stream broke: the request in flight (one at a time, C8) ends as DeliveryUnknown, and the
// client forgets it; it is never sent again (C54).
const endBroken = (machine: Machine, connection: Connection): void => {
  for (const [requestId, controller] of connection.inflight) {
    connection.inflight.delete(requestId)
    postFailure(
      machine,
      requestId,
      new DeliveryUnknown({ workerId: connection.workerId, requestId, reason: "stream_broken", delivery: "unknown" })
    )
    controller.abort("stream_broken")
  }
}

/** The client's `onerror`: an oversized answer, or what the transport classifies as the connection's end. @internal */
export const onClientError = (machine: Machine, connection: Connection, error: Error): void => {
  if (error instanceof OversizedMessage) return refuseOversized(machine, connection, error)
  if (error instanceof StreamBroken) return endBroken(machine, connection)
  // Stray lines and late responses to cancelled requests are reported here; they are not fatal.
  const kind = connection.transport.classify?.(error)
  if (kind !== undefined) fail(machine, kind, Redact.redact(errorText(error), connection.secrets()))
}

// `onTooLarge`: a `callTool` without `saveTo` spills into its own directory, else its worker's.
interface SpillRequest {
  readonly requestId: string
  readonly method: string
  readonly saveTo?: string | undefined
  readonly spill?: string | false | undefined
}

// A transport that cannot spill (HTTP) refuses the request unsent.
const startSpill = (
  connection: Connection,
  request: SpillRequest,
  params: Record<string, unknown>
): Either.Either<Owner.ResponseSpill, InvalidInput> | undefined => {
  if (request.method !== "tools/call" || request.saveTo !== undefined || request.spill === false) return undefined
  const directory = request.spill ?? connection.spill
  if (directory === undefined) return undefined
  const { spillResponse } = connection.transport
  if (spillResponse === undefined) {
    const message = "spill is for stdio servers"
    return Either.left(
      new InvalidInput({ where: "arguments", path: "options.onTooLarge.spill", message, delivery: "not_sent" })
    )
  }
  return Either.right(spillResponse(directory, ResultFile.fileName(params.name, request.requestId)))
}

// `undefined`: the result was not spilled. Disarmed either way.
const spilledAnswer = (spill: Owner.ResponseSpill): ReadonlyArray<unknown> | undefined => {
  const summary = spill.summary()
  spill.discard()
  return summary === undefined ? undefined : ResultFile.encodeSpilled(summary, spill.limit)
}
