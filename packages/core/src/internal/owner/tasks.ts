/** Tasks on the 2025-11-25 revision (C72). */
import { ProtocolError, specTypeSchemas, type StandardSchemaV1 } from "@modelcontextprotocol/client"
import { InvalidInput, PreflightFailed, type WorkerFailed } from "../../McpWorkerError.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Redact from "../../Redact.js"
import { errorText, isSchemaError, schemaErrorSummary, TaskEndedWithout, without } from "./errors.js"
import { type Connection, connectionGone, type Machine, RequestAbort } from "./state.js"
import * as Extension from "./tasksExtension.js"

/** Absent means `forbidden`. @internal */
export type TaskSupport = "required" | "optional" | "forbidden"

/** @internal */
export type Known = Map<string, TaskSupport>

/** @internal */
export const isStart = (method: OwnerProtocol.Method, params: Record<string, unknown>): boolean =>
  method === "tools/call" && params.task !== undefined

/** @internal */
export const createdSchema: StandardSchemaV1 = specTypeSchemas.CreateTaskResult

/** @internal */
export const learn = (known: Known, result: unknown): void => {
  const tools = (result as { tools?: unknown } | undefined)?.tools
  if (!Array.isArray(tools)) return
  for (const tool of tools) {
    if (typeof tool?.name !== "string") continue
    const support = tool.execution?.taskSupport
    known.set(tool.name, support === "required" || support === "optional" ? support : "forbidden")
  }
}

/** Since the tools last changed; a tool not in the map runs plainly. */
const listedWhole = new WeakSet<Known>()

/** @internal */
export const forget = (known: Known): void => {
  known.clear()
  listedWhole.delete(known)
}

/** C72: only the listing says whether a tool requires a task. @internal */
export const mustList = (
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>
): boolean =>
  connection.modern === undefined &&
  method === "tools/call" &&
  params.task === undefined &&
  typeof params.name === "string" &&
  !connection.taskSupport.has(params.name) &&
  !listedWhole.has(connection.taskSupport) &&
  (connection.client.getServerCapabilities()?.tasks as ServerTasks | undefined)?.requests?.tools?.call !== undefined

/** C72, C75 @internal */
export const runsTasks = (client: Connection["client"], modern: boolean): boolean =>
  modern
    ? Extension.serverDeclares(client)
    : (client.getServerCapabilities()?.tasks as ServerTasks | undefined)?.requests?.tools?.call !== undefined

const maxListedPages = 100

/** C95 */
export interface ListingEnd {
  readonly send: () => void
  readonly fail: (why: unknown) => void
}

/** C95, C72: listed as the request itself. @internal */
export const listThen = (connection: Connection, requestId: string, timeoutMs: number, end: ListingEnd): void => {
  const controller = new RequestAbort()
  connection.inflight.set(requestId, controller)
  const release = connection.transport.ownRequest?.("tools/list")
  const listPages = async () => {
    let cursor: string | undefined
    for (let page = 0; page < maxListedPages; page++) {
      const params = cursor === undefined ? {} : { cursor }
      const result = await connection.client.request(
        { method: "tools/list", params },
        specTypeSchemas.ListToolsResult,
        {
          signal: controller.signal,
          timeout: timeoutMs
        }
      )
      learn(connection.taskSupport, result)
      cursor = result.nextCursor
      if (cursor === undefined) return void listedWhole.add(connection.taskSupport)
    }
  }
  // Whoever ended the request has answered its caller.
  const ended = () => {
    if (connection.inflight.get(requestId) !== controller) return true
    connection.inflight.delete(requestId)
    return false
  }
  listPages()
    .finally(release)
    .then(
      () => ended() || end.send(),
      (error: unknown) => ended() || end.fail(error)
    )
}

/** C95; C24: never the answer's data. @internal */
export const listingFailed = (
  machine: Machine,
  connection: Connection,
  requestId: string,
  error: unknown
): PreflightFailed | WorkerFailed => {
  if (machine.state._tag !== "Ready")
    return connectionGone(machine.state, "not_sent", "transport", "the connection closed")
  const detail =
    error instanceof ProtocolError
      ? `the server answered it with error ${error.code}`
      : isSchemaError(error)
        ? `its result does not match the MCP schema (${schemaErrorSummary(error)})`
        : `it failed in the client: ${Redact.redact(errorText(error), connection.secrets())}`
  return preflightFailed(connection, requestId, detail)
}

/** @internal */
export const preflightFailed = (connection: Connection, requestId: string, detail: string): PreflightFailed =>
  new PreflightFailed({ workerId: connection.workerId, requestId, method: "tools/list", detail, delivery: "not_sent" })

const refused = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

interface ServerTasks {
  readonly list?: object
  readonly cancel?: object
  readonly requests?: { readonly tools?: { readonly call?: object } }
}

/** C72, C24 @internal */
export const refusal = (
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>
): InvalidInput | undefined => {
  // C75
  if (connection.modern !== undefined && (isStart(method, params) || method.startsWith("tasks/"))) {
    return Extension.refusal(connection, method, params)
  }
  const server = connection.client.getServerCapabilities()?.tasks as ServerTasks | undefined
  if (method === "tools/call") {
    const support = typeof params.name === "string" ? connection.taskSupport.get(params.name) : undefined
    if (params.task === undefined) {
      return support === "required"
        ? refused("name", "that tool runs only as a task: start it with startTask, then read it with taskResult")
        : undefined
    }
    if (server?.requests?.tools?.call === undefined) {
      return refused("name", "this server runs no tool calls as tasks (its capabilities declare none)")
    }
    return support === "forbidden" ? refused("name", "the server listed that tool as never run as a task") : undefined
  }
  if (!method.startsWith("tasks/")) return undefined
  if (server === undefined) return refused("taskId", "this server runs no tasks (its capabilities declare none)")
  if (method === "tasks/list" && server.list === undefined) return refused("cursor", "this server lists no tasks")
  if (method === "tasks/cancel" && server.cancel === undefined) return refused("taskId", "this server cancels no tasks")
  return undefined
}

/** C123, else C71. @internal */
export const failedWait = async (
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>,
  error: unknown,
  options: { readonly signal: AbortSignal; readonly timeout: number }
): Promise<never> => {
  const taskId = params.taskId
  if (method !== "tasks/result" || connection.modern !== undefined || !(error instanceof ProtocolError)) {
    throw withoutTaskId(params, error)
  }
  const task = await connection.client
    .request({ method: "tasks/get", params: { taskId } }, specTypeSchemas.GetTaskResult, options)
    .catch(() => undefined)
    .finally(() => connection.transport.takeResponse?.())
  if (task === undefined || (task.status !== "cancelled" && task.status !== "failed")) {
    throw withoutTaskId(params, error)
  }
  // A failed task's error is the refused `tasks/result`'s code; a cancelled one has none.
  const code = task.status === "failed" ? error.code : undefined
  throw new TaskEndedWithout(task.status, without(taskId, task.statusMessage), code)
}

/** C71 @internal */
export const withoutTaskId = (params: Record<string, unknown>, error: unknown): unknown => {
  const taskId = params.taskId
  if (typeof taskId !== "string" || !(error instanceof ProtocolError)) return error
  return new ProtocolError(error.code, without(taskId, error.message)!)
}
