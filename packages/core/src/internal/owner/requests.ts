/**
 * The owner's requests to its server, from the host's `Request` and from a remote caller's `Direct` alike: each one's
 * budget, progress and answer.
 */
import { ProtocolError, ProtocolErrorCode, SdkError, type StandardSchemaV1 } from "@modelcontextprotocol/client"
import * as Either from "effect/Either"
import {
  DeadlineExceeded,
  DeliveryUnknown,
  type InputRoundsExceeded,
  InvalidInput,
  type McpWorkerError,
  ResultTooLarge,
  ServerError,
  TaskEnded,
  type UnusableResult,
  WorkerBusy,
  WorkerFailed
} from "../../McpWorkerError.js"
import * as JsonValue from "../../JsonValue.js"
import * as Operations from "../../Operations.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Redact from "../../Redact.js"
import * as ResultFile from "../../ResultFile.js"
import * as WorkerId from "../../WorkerId.js"
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
import { listen } from "./notifications.js"
import type { DirectOwner, DirectRequest } from "./owner.js"
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
  endDirect,
  fail,
  type Machine,
  type Modern,
  type Port,
  postFailure,
  RequestAbort,
  secondsSince,
  takeDirect,
  workerIdOf
} from "./state.js"
import * as Tasks from "./tasks.js"
import * as TasksExtension from "./tasksExtension.js"

// The SDK's own per-request timer must never fire before the host's budget.
const sdkTimeoutSlackMs = 5_000

// C25: the protocol's schema, never what a server declared.
const resultSchemas = Object.fromEntries(
  Object.values(Operations.requests)
    .filter((operation) => operation !== Operations.requests.startTask)
    .map((operation) => [operation.method, operation.result])
) as Readonly<Record<OwnerProtocol.Method, StandardSchemaV1>>

const sdkTimeoutOf = (message: Taken): number =>
  Math.min(Math.max(0, message.deadline - Date.now()) + sdkTimeoutSlackMs, maxTimeoutMs)

/** @internal */
export type Taken = Omit<typeof OwnerProtocol.RequestMessage.Type, "_tag" | "params">

/** @internal */
export const messageHandler =
  (machine: Machine) =>
  (raw: unknown): void =>
    onMessage(machine, raw)

/** Never throws. @internal */
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
      // C12
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

/** @internal */
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

/** A remote caller's plane, on the owner's machine. @internal */
export const directHandlers = (machine: Machine): Pick<DirectOwner, "startDirect" | "interruptDirect" | "heard"> => ({
  startDirect: (request) => startDirect(machine, request),
  interruptDirect: (from, callId) => interruptDirect(machine, from, callId),
  heard: (from) => {
    if (machine.direct?.replyTo.channel === from) machine.direct.heardAt = Date.now()
  }
})

// C8, C9, C12
const startDirect = (machine: Machine, request: DirectRequest): void => {
  const { thread } = request
  const replyTo = { channel: request.from, callId: request.callId, ...(thread === undefined ? {} : { thread }) }
  const refuse = (error: McpWorkerError & { readonly delivery: "not_sent" }) => {
    machine.port.observe?.(request.method, error._tag, "not_sent", undefined, undefined)
    machine.port.postDirectFailure?.(replyTo, error, undefined)
  }
  const state = machine.state
  if (state._tag !== "Ready") {
    return refuse(
      connectionGone(state, "not_sent", "closing", "the connection is not ready") as WorkerFailed & {
        readonly delivery: "not_sent"
      }
    )
  }
  const { connection } = state
  const { workerId } = connection
  const busy = machine.direct?.requestId ?? busyWith(connection)
  if (busy !== undefined) return refuse(new WorkerBusy({ workerId, requestId: busy, delivery: "not_sent" }))
  const params = parseParams(request.params)
  if (params === undefined) {
    const message = "the request params must be the JSON text of a plain object"
    return refuse(new InvalidInput({ where: "arguments", path: "params", message, delivery: "not_sent" }))
  }
  const left = request.deadline - Date.now()
  // C9, C22a: the deadline passed in transit.
  if (!(left > 0)) return refuse(new DeadlineExceeded({ workerId, delivery: "not_sent" }))
  const requestId = WorkerId.makeRequestId()
  const now = Date.now()
  const direct: DirectInFlight = {
    replyTo,
    requestId,
    method: request.method,
    sentAt: performance.now(),
    deadline: now + Math.min(left, maxTimeoutMs),
    heardAt: now,
    timer: undefined
  }
  machine.direct = direct
  machine.port.taken?.(requestId, request.method)
  watch(machine, direct)
  send(machine, connection, { ...request, requestId, deadline: direct.deadline }, params)
}

// One timer: the deadline (C9, C10) or caller silence (C11, C22), whichever comes first.
const watch = (machine: Machine, direct: DirectInFlight): void => {
  const at = Math.min(direct.deadline, direct.heardAt + machine.callerGoneAfterMs)
  direct.timer = setTimeout(onWatch, Math.max(0, at - Date.now()), machine, direct)
}

const onWatch = (machine: Machine, direct: DirectInFlight): void => {
  if (machine.direct !== direct) return
  const now = Date.now()
  if (now >= direct.deadline) return void endDirect(machine, direct.requestId, "timeout")
  if (now - direct.heardAt >= machine.callerGoneAfterMs) return void endDirect(machine, direct.requestId, "interrupted")
  watch(machine, direct)
}

const parseParams = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return JsonValue.isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

// C8: on the request's own channel, so it cannot overtake it.
const interruptDirect = (machine: Machine, from: string, callId: number): void => {
  const direct = machine.direct
  if (direct === undefined || direct.replyTo.channel !== from || direct.replyTo.callId !== callId) return
  endDirect(machine, direct.requestId, "interrupted")
}

/** @internal */
export const send = (
  machine: Machine,
  connection: Connection,
  message: Taken,
  parsed: Record<string, unknown>,
  listed = false
): void => {
  const { requestId } = message
  const { workerId } = connection
  // C59: every path to the server passes here.
  if (message.method === "tools/call" && connection.tools !== undefined) {
    if (!ToolFilter.allowsCompiled(connection.tools, parsed.name)) {
      return postFailure(machine, requestId, outsideFilter())
    }
  }
  // C22a: a deadline passed in the owner's queue or during the listing below; nothing went out.
  const left = message.deadline - Date.now()
  if (!(left > 0)) return postFailure(machine, requestId, new DeadlineExceeded({ workerId, delivery: "not_sent" }))
  if (!listed && Tasks.mustList(connection, message.method, parsed)) {
    return Tasks.listThen(connection, requestId, Math.min(left, maxTimeoutMs), {
      send: () => send(machine, connection, message, parsed, true),
      fail: (error) =>
        postFailure(
          machine,
          requestId,
          message.deadline <= Date.now()
            ? new DeadlineExceeded({ workerId, delivery: "not_sent" })
            : Tasks.listingFailed(machine, connection, requestId, error)
        )
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
  // C175: the owner's deadline; a remote thread's own request has its watch, which also hears the caller's silence.
  if (machine.direct?.requestId !== requestId) {
    controller.deadline = setTimeout(onTimeout, Math.min(left, maxTimeoutMs), machine, requestId)
  }
  if (save !== undefined) controller.addEventListener("abort", save.right.discard)
  if (spill !== undefined) controller.addEventListener("abort", spill.right.discard)
  // C121
  const progressed =
    message.progress === true || message.idleMs !== undefined ? withProgressToken(parsed, requestId) : parsed
  // C83
  const params =
    message.trace === undefined
      ? progressed
      : withTraceContext(progressed, machine.port.spanOf?.(requestId) ?? message.trace)
  if (message.progress === true) connection.progress.set(requestId, controller)
  if (message.idleMs !== undefined) watchIdle(machine, connection, requestId, message.idleMs, controller)
  const requestOptions = {
    signal: controller.signal,
    timeout: sdkTimeoutOf(message),
    ...(headers?.right !== undefined ? { headers: headers.right } : {})
  }
  // C25: `callTool`/`listTools` would act on untrusted tool descriptions.
  const schema = Tasks.isStart(message.method, parsed) ? Tasks.createdSchema : resultSchemas[message.method]
  const sent =
    (connection.modern !== undefined
      ? (TasksExtension.send(machine, connection, message.method, params, requestOptions) ??
        modernOnly(connection, connection.modern, message.method, params, requestOptions))
      : undefined) ?? connection.client.request({ method: message.method, params }, schema, requestOptions)
  // C72, C71
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

// C24: the tool's name is the caller's data.
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

/** C59, C62 */
interface Listing {
  readonly filter: ToolFilter.Compiled | undefined
  readonly known: ParamHeaders.Known | undefined
}

const listingOf = (connection: Connection): Listing | undefined => {
  const known = connection.modern?.params
  return connection.tools === undefined && known === undefined ? undefined : { filter: connection.tools, known }
}

// `undefined`: the result stands as the server sent it.
const listed = (listing: Listing, result: unknown): unknown => {
  const valid = listing.known === undefined ? undefined : ParamHeaders.excludeInvalid(listing.known, result)
  if (listing.filter !== undefined) return ToolFilter.filterList(listing.filter, valid ?? result)
  return valid
}

/** C57: what 2026-07-28 has no method for; `undefined`: a plain request. */
const modernOnly = (
  connection: Connection,
  modern: Modern,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>,
  options: { readonly signal: AbortSignal; readonly timeout: number }
): Promise<unknown> | undefined => {
  if (method === "ping") {
    return connection.client.discover(options).then(() => {
      // Not this request's result.
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

// The file is made before anything is sent, so a failure here is `not_sent`.
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
  clearTimeout(controller.deadline)
  idleEnded(connection, requestId)
  if (Either.isLeft(exit)) file?.discard()
  // The host already answered a cancelled request.
  if (controller.aborted) return
  if (Either.isLeft(exit))
    return postFailure(machine, requestId, requestError(machine, connection, requestId, exit.left))
  const { port } = machine
  if (file !== undefined && !("limit" in file)) return postSaved(machine, connection, requestId, file)
  const spilled = file === undefined ? undefined : spilledAnswer(file)
  if (spilled !== undefined) {
    if (port.postResult !== undefined) return port.postResult(requestId, spilled)
    return postSuccess(machine, requestId, JSON.stringify(spilled), false, spilled)
  }
  const response = connection.transport.takeResponse?.()
  // C59, C62: filtered, so no longer the server's line.
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

const postSuccess = (machine: Machine, requestId: string, result: string, envelope: boolean, value: unknown): void => {
  const direct = takeDirect(machine, requestId)
  if (direct === undefined) return machine.port.post({ _tag: "Success", requestId, result, envelope })
  observeSuccess(machine.port, direct, value)
  machine.port.postDirect!(direct.replyTo, result, envelope, requestId)
}

// C80: never the result itself.
const observeSuccess = (port: Port, direct: DirectInFlight, value: unknown): void => {
  if (port.observe === undefined) return
  const spill = Array.isArray(value) ? ResultFile.answerOf(value) : undefined
  const spilled = ResultFile.isSpilled(spill) ? spill : undefined
  const read = (spilled ?? value) as { readonly isError?: unknown } | null
  const isError = typeof read === "object" && read !== null && read.isError === true
  port.observe(direct.method, isError ? "is_error" : "result", "delivered", secondsSince(direct.sentAt), spilled?.bytes)
}

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
    // C34
    return new WorkerFailed({
      workerId,
      kind,
      message: failure.message,
      delivery: kind === "unauthorized" ? "not_sent" : "unknown"
    })
  }
  if (machine.state._tag !== "Ready")
    return connectionGone(machine.state, "unknown", "transport", "the connection closed")
  // C54
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
  // C15 is for a connection the transport reported closed.
  const message = isSchemaError(error)
    ? `the server's result does not match the MCP schema (${schemaErrorSummary(error)})`
    : `the request failed in the client: ${Redact.redact(errorText(error), secrets)}`
  // C116: a refused result was the server's answer; a client failure may come before it.
  const delivery = isSchemaError(error) ? "delivered" : "unknown"
  return new ServerError({ workerId, requestId, code: ProtocolErrorCode.InternalError, message, delivery })
}

// Aborting cancels at the server. C95: past the owner's own bound, the call was not sent.
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

// C54, C8
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

/** The client's `onerror`. @internal */
export const onClientError = (machine: Machine, connection: Connection, error: Error): void => {
  if (error instanceof OversizedMessage) return refuseOversized(machine, connection, error)
  if (error instanceof StreamBroken) return endBroken(machine, connection)
  // Stray lines and late responses to cancelled requests: not fatal.
  const kind = connection.transport.classify?.(error)
  if (kind !== undefined) fail(machine, kind, Redact.redact(errorText(error), connection.secrets()))
}

interface SpillRequest {
  readonly requestId: string
  readonly method: string
  readonly saveTo?: string | undefined
  readonly spill?: string | false | undefined
}

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

// `undefined`: not spilled. Disarmed either way.
const spilledAnswer = (spill: Owner.ResponseSpill): ReadonlyArray<unknown> | undefined => {
  const summary = spill.summary()
  spill.discard()
  return summary === undefined ? undefined : ResultFile.encodeSpilled(summary, spill.limit)
}

const progressOf = (progress: {
  progress: number
  total?: number | undefined
  message?: string | undefined
}): OwnerProtocol.Progress => ({
  progress: progress.progress,
  ...(typeof progress.total === "number" ? { total: progress.total } : {}),
  ...(typeof progress.message === "string" ? { message: progress.message } : {})
})

/** Not the SDK's `onprogress`, which drops progress written along with the response. @internal */
export const forwardProgress = (machine: Machine, connection: Connection): void => {
  connection.client.setNotificationHandler("notifications/progress", (notification) => {
    const requestId = String(notification.params.progressToken)
    idleProgressed(machine, connection, requestId)
    const controller = connection.progress.get(requestId)
    if (controller === undefined || controller.aborted) return
    machine.port.post({ _tag: "Progress", requestId, progress: progressOf(notification.params) })
  })
}

// The request id is unique in this owner.
const withProgressToken = (params: Record<string, unknown>, requestId: string) => ({
  ...params,
  _meta: {
    ...(typeof params._meta === "object" && params._meta !== null ? params._meta : {}),
    progressToken: requestId
  }
})

// C121: a request's idle budget, restarted by each progress.
const watchIdle = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  idleMs: number,
  controller: RequestAbort
): void => {
  connection.idle.set(requestId, { idleMs, timer: setTimeout(onTimeout, idleMs, machine, requestId) })
  controller.addEventListener("abort", () => idleEnded(connection, requestId))
}

const idleProgressed = (machine: Machine, connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  clearTimeout(idle.timer)
  idle.timer = setTimeout(onTimeout, idle.idleMs, machine, requestId)
}

const idleEnded = (connection: Connection, requestId: string): void => {
  const idle = connection.idle.get(requestId)
  if (idle === undefined) return
  connection.idle.delete(requestId)
  clearTimeout(idle.timer)
}

// C10: at the deadline, or after the idle budget.
const onTimeout = (machine: Machine, requestId: string): void => {
  if (endDirect(machine, requestId, "timeout")) return
  if (!cancel(machine.state, requestId, "timeout")) return
  const workerId = workerIdOf(machine.state)
  postFailure(machine, requestId, new DeliveryUnknown({ workerId, requestId, reason: "timeout", delivery: "unknown" }))
}
