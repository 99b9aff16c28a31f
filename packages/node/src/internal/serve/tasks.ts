// C156–C158; C71: the listener grant's record of tasks is the only one.
import { InvalidInput, type RequestError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import * as Effect from "effect/Effect"
import * as Grants from "../listen/grants.js"
import * as Gateway from "./gateway.js"

/** C156 @internal */
export const runsTasks = (gateway: Gateway.Gateway, bundle: Gateway.Bundle): boolean =>
  Gateway.liveEntries(gateway, bundle).some(([entry]) => gateway.registry.runsTasks(entry.workerId))

/** @internal */
export const capabilities = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }

export type ById = "getTask" | "taskResult" | "cancelTask"

type Item = Record<string, unknown>

/** C157, C71 @internal */
export const byId = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  name: ById,
  params: Item
): Effect.Effect<Item, RequestError> => {
  const taskId = params.taskId
  const now = Date.now()
  const holders = [...bundle.entries.values()].filter(
    (entry) => typeof taskId === "string" && Grants.resolve(gateway.inner, entry.grant, now)?.tasks.has(taskId)
  )
  if (holders.length === 1) return Gateway.request(gateway, holders[0], name, params) as Effect.Effect<Item>
  const refused =
    holders.length === 0
      ? Grants.notItsTask()
      : new InvalidInput({
          where: "arguments",
          path: "taskId",
          message: `a task of that id was started on ${holders.map((entry) => entry.name).join(" and ")}`,
          delivery: "not_sent"
        })
  return Effect.fail(gateway.registry.refusedBefore(undefined, Operations.requests[name].method, "gateway", refused))
}

/** C71 @internal */
export const list = (gateway: Gateway.Gateway, bundle: Gateway.Bundle): Effect.Effect<{ tasks: ReadonlyArray<Item> }> =>
  Effect.map(
    Effect.forEach(Gateway.liveEntries(gateway, bundle), ([entry]) => listOne(gateway, entry)),
    (lists) => ({ tasks: lists.flat() })
  )

const listOne = (gateway: Gateway.Gateway, entry: Gateway.Entry): Effect.Effect<ReadonlyArray<Item>> =>
  Effect.gen(function* () {
    const tasks: Array<Item> = []
    const seen = new Set<string>()
    let cursor: string | undefined = undefined
    for (let page = 0; page < AgentHost.maxPages; page++) {
      const params = cursor === undefined ? {} : { cursor }
      const result = (yield* Gateway.request(gateway, entry, "listTasks", params)) as Item
      tasks.push(...((result.tasks as ReadonlyArray<Item> | undefined) ?? []))
      const next = result.nextCursor
      if (typeof next !== "string" || seen.has(next)) break
      seen.add(next)
      cursor = next
    }
    return tasks
  }).pipe(Effect.orElseSucceed((): ReadonlyArray<Item> => []))

export type Answer = <A>(
  request: (bundle: Gateway.Bundle) => Effect.Effect<A, RequestError>,
  signal: AbortSignal
) => Promise<A>

/** C156, C157 @internal */
export const register = (server: Server, answer: Answer, gateway: Gateway.Gateway): void => {
  const one = (name: ById) => (request: { params: Item }, extra: { signal: AbortSignal }) =>
    answer((bundle) => byId(gateway, bundle, name, { taskId: request.params.taskId }), extra.signal) as never
  server.setRequestHandler(GetTaskRequestSchema, one("getTask"))
  server.setRequestHandler(GetTaskPayloadRequestSchema, one("taskResult"))
  server.setRequestHandler(CancelTaskRequestSchema, one("cancelTask"))
  server.setRequestHandler(ListTasksRequestSchema, (_request, extra) =>
    answer((bundle) => list(gateway, bundle), extra.signal)
  )
}
