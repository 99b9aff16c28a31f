/**
 * Tasks in the owner (the 2025-11-25 revision): what the server's capabilities and its listed tools allow, checked
 * before anything is sent (C72), and a server's error about a task told without the task's id (C71).
 */
import { ProtocolError, specTypeSchemas, type StandardSchemaV1 } from "@modelcontextprotocol/client"
import { InvalidInput, PreflightFailed, type WorkerFailed } from "../../McpWorkerError.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Redact from "../../Redact.js"
import { errorText, isSchemaError, schemaErrorSummary, TaskEndedWithout, without } from "./errors.js"
import { type Connection, connectionGone, type Machine, RequestAbort } from "./state.js"
import * as Extension from "./tasksExtension.js"

/** A tool's `execution.taskSupport` as the server listed it; absent means `forbidden`. @internal */
export type TaskSupport = "required" | "optional" | "forbidden"

/** What the tools listed so far declared about tasks, by tool name. @internal */
export type Known = Map<string, TaskSupport>

/** A `tools/call` that asks for a task carries `task`. @internal */
export const isStart = (method: OwnerProtocol.Method, params: Record<string, unknown>): boolean =>
  method === "tools/call" && params.task !== undefined

/** The protocol's schema of a task start's answer. @internal */
export const createdSchema: StandardSchemaV1 = specTypeSchemas.CreateTaskResult

/** Learns each listed tool's task support from a `tools/list` result. @internal */
export const learn = (known: Known, result: unknown): void => {
  const tools = (result as { tools?: unknown } | undefined)?.tools
  if (!Array.isArray(tools)) return
  for (const tool of tools) {
    if (typeof tool?.name !== "string") continue
    const support = tool.execution?.taskSupport
    known.set(tool.name, support === "required" || support === "optional" ? support : "forbidden")
  }
}

/** The maps of connections whose tools were all listed since they last changed: a tool not in them runs plainly. */
const listedWhole = new WeakSet<Known>()

/** The server's tools changed: what they declared is forgotten until they are listed again. @internal */
export const forget = (known: Known): void => {
  known.clear()
  listedWhole.delete(known)
}

/**
 * Whether a plain call waits for the owner to list the server's tools first: on a server that runs tool calls as
 * tasks, only the listing says whether this tool requires one, and a call it refuses must not be sent (C72).
 *
 * @internal
 */
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

/**
 * Whether the server runs tool calls as tasks: a 2025-11-25 server declares `tasks.requests.tools.call`, a 2026-07-28
 * one the tasks extension (C72, C75).
 *
 * @internal
 */
export const runsTasks = (client: Connection["client"], modern: boolean): boolean =>
  modern
    ? Extension.serverDeclares(client)
    : (client.getServerCapabilities()?.tasks as ServerTasks | undefined)?.requests?.tools?.call !== undefined

const maxListedPages = 100

/** What a listing ends with: the call goes (`send`), or it is refused unsent, `why` its listing failed (C95). */
export interface ListingEnd {
  readonly send: () => void
  readonly fail: (why: unknown) => void
}

/**
 * Lists every page of the server's tools as the request `requestId` (the worker stays busy with it, and a cancel or
 * the budget ends the listing), then `send`s the call, unless the request ended meanwhile: then nothing of the call
 * went out. The listing is the owner's own request, bounded as such (C95); a listing that fails fails the call, unsent:
 * without it the owner cannot tell whether the server would refuse the call (C72).
 *
 * @internal
 */
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
  // Whoever ended the request meanwhile (a cancel, the budget, an answer past the bound) has answered its caller.
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

/**
 * The owner's tool listing before a call failed (C95): the call was not sent. What the error says of it is the
 * server's error code or the client's words, never the answer's data (C24).
 *
 * @internal
 */
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

/**
 * Why a request cannot go to this server as a task request, or `undefined`. A plain call of a tool listed as requiring
 * a task is refused here, as the server would refuse it (C72); names stay out of the message (C24).
 *
 * @internal
 */
export const refusal = (
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Record<string, unknown>
): InvalidInput | undefined => {
  // On a 2026-07-28 connection the server decides which calls become tasks; what it allows is its extension (C75).
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

/**
 * A task request that failed, as the caller gets it: a `tasks/result` the server refused on a 2025-11-25 connection
 * is followed by a `tasks/get` within the same budget, and a task that ended `cancelled` or `failed` is told as such
 * (C123); anything else stands as it came, the task's id taken out (C71).
 *
 * @internal
 */
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
  // A failed task's own error is the code of the refused `tasks/result`; a cancelled one has none.
  const code = task.status === "failed" ? error.code : undefined
  throw new TaskEndedWithout(task.status, without(taskId, task.statusMessage), code)
}

/**
 * A server's error about a task, its id taken out of the message and its data left behind: whoever reads the error
 * may not hold the task (C71).
 *
 * @internal
 */
export const withoutTaskId = (params: Record<string, unknown>, error: unknown): unknown => {
  const taskId = params.taskId
  if (typeof taskId !== "string" || !(error instanceof ProtocolError)) return error
  return new ProtocolError(error.code, without(taskId, error.message)!)
}
