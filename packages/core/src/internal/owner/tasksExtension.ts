/**
 * Tasks on the 2026-07-28 revision, where they are the `io.modelcontextprotocol/tasks` extension (C75, C75a–C75c). The five
 * task operations keep the model of the 2025-11-25 revision (C70–C74); this module is where the eras differ. Each
 * operation runs on a session of `@modelcontextprotocol/ext-tasks`'s client (tasksSession.ts, loaded with the first
 * one), over a port that lives as long as the operation (tasksDispatch.ts): the package frames the requests, reads the flat task, polls `tasks/get`, and brings a
 * task's input requests to the host's handlers with `tasks/update`.
 */
import { type Client, ProtocolError } from "@modelcontextprotocol/client"
import { InvalidInput } from "../../McpWorkerError.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import type { Connection, Machine } from "./state.js"
import type { RequestOptions } from "./tasksDispatch.js"

/** The extension's identifier. @internal */
export const extensionId = "io.modelcontextprotocol/tasks"

/** The code of a server that needs a client capability the request did not declare. @internal */
export const missingCapabilityCode = -32021

type Json = Record<string, any>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Does the server declare the extension (its `server/discover` capabilities)? @internal */
export const serverDeclares = (client: Client): boolean => {
  const extensions = (client.getServerCapabilities() as { extensions?: Json } | undefined)?.extensions
  return isObject(extensions) && extensions[extensionId] !== undefined
}

const refused = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

/**
 * Why a task operation cannot go to this 2026-07-28 server, or `undefined` (C75): the server must declare the
 * extension, and `tasks/list` no longer exists.
 *
 * @internal
 */
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
  if (!serverDeclares(connection.client)) {
    return refused(isStart ? "name" : "taskId", `this server does not declare the ${extensionId} extension`)
  }
  return undefined
}

/**
 * A task operation on a 2026-07-28 connection, or `undefined` when the request is no task operation. Every request it
 * sends is bounded by the owner's request (its budget, its exact cancel on abort). The package is loaded with the
 * first one (`tasksSession.ts`).
 *
 * @internal
 */
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

// What `tasksSession.ts` `send` runs: a task's start, and `tasks/get`, `tasks/result`, `tasks/cancel` of a task id.
const isTaskOperation = (method: OwnerProtocol.Method, params: Json): boolean =>
  (method === "tools/call" && params.task !== undefined) ||
  ((method === "tasks/get" || method === "tasks/result" || method === "tasks/cancel") &&
    typeof params.taskId === "string")

/**
 * A server's `-32021` for a plain call: the tool needs the extension, so it runs only as a task (C75a).
 *
 * @internal
 */
export const needsTask = (method: OwnerProtocol.Method, params: Json, error: unknown): unknown =>
  method === "tools/call" && params.task === undefined && error instanceof ProtocolError
    ? error.code === missingCapabilityCode
      ? new ProtocolError(
          missingCapabilityCode,
          "the server runs that tool only as a task: start it with startTask, then read it with taskResult"
        )
      : error
    : error
