/** C75–C75c: tasks on the 2026-07-28 revision, where the eras differ. */
import { type Client, ProtocolError } from "@modelcontextprotocol/client"
import { InvalidInput } from "../../McpWorkerError.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import type { Connection, Machine } from "./state.js"
import type { RequestOptions } from "./tasksDispatch.js"

/** @internal */
export const extensionId = "io.modelcontextprotocol/tasks"

/** A client capability the request did not declare. @internal */
export const missingCapabilityCode = -32021

type Json = Record<string, any>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** @internal */
export const serverDeclares = (client: Client): boolean => {
  const extensions = (client.getServerCapabilities() as { extensions?: Json } | undefined)?.extensions
  return isObject(extensions) && extensions[extensionId] !== undefined
}

const refused = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

/** C75 @internal */
export const refusal = (
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Json
): InvalidInput | undefined => {
  const isStart = method === "tools/call" && params.task !== undefined
  if (!isStart && !method.startsWith("tasks/")) return undefined
  if (method === "tasks/list") {
    return refused("cursor", "the 2026-07-28 revision has no tasks/list: keep the task ids startTask answered")
  }
  return serverDeclares(connection.client)
    ? undefined
    : refused(isStart ? "name" : "taskId", `this server does not declare the ${extensionId} extension`)
}

/** `undefined` for no task operation; the extension's package loads with the first one. @internal */
export const send = (
  machine: Machine,
  connection: Connection,
  method: OwnerProtocol.Method,
  params: Json,
  options: RequestOptions
): Promise<unknown> | undefined => {
  const modern = connection.modern
  if (modern === undefined || !isTaskOperation(method, params)) return undefined
  return import("./tasksSession.js").then(
    (session) => session.send(machine, connection, modern, method, params, options) ?? Promise.resolve(undefined)
  )
}

const isTaskOperation = (method: OwnerProtocol.Method, params: Json): boolean =>
  (method === "tools/call" && params.task !== undefined) ||
  ((method === "tasks/get" || method === "tasks/result" || method === "tasks/cancel") &&
    typeof params.taskId === "string")

/** C75a: a server's `-32021` for a plain call means the tool runs only as a task. @internal */
export const needsTask = (method: OwnerProtocol.Method, params: Json, error: unknown): unknown =>
  method === "tools/call" && params.task === undefined && error instanceof ProtocolError
    ? error.code === missingCapabilityCode
      ? new ProtocolError(
          missingCapabilityCode,
          "the server runs that tool only as a task: start it with startTask, then read it with taskResult"
        )
      : error
    : error
