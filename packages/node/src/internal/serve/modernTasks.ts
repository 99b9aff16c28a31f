// C160: the v2 server SDK has no task runtime, so tasks are answered before its handler.
import { InvalidInput, type RequestError } from "@mcp-worker/core/McpWorkerError"
import * as Tasks from "@mcp-worker/core/Tasks"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Gateway from "./gateway.js"
import type { Run } from "./mcpServer.js"
import * as ServeTasks from "./tasks.js"

type Json = Record<string, any>

/** C160 @internal */
export const capabilities = { extensions: { [Tasks.extensionId]: {} } }

const declares = (params: Json | undefined): boolean =>
  params?._meta?.["io.modelcontextprotocol/clientCapabilities"]?.extensions?.[Tasks.extensionId] !== undefined

// C70's `ttl` and `pollInterval`, flat.
const flat = ({ ttl, pollInterval, ...task }: Json): Json => ({
  ...task,
  ttlMs: ttl ?? null,
  ...(pollInterval === undefined ? {} : { pollIntervalMs: pollInterval })
})

// The revision's envelope is the gateway's, not the worker's.
const forwarded = (meta: Json | undefined): Json | undefined => {
  const kept = Object.entries(meta ?? {}).filter(
    ([key]) => key !== "progressToken" && !key.startsWith("io.modelcontextprotocol/")
  )
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

/** C72 */
const runsAsTask = (gateway: Gateway.Gateway, bundle: Gateway.Bundle, entry: Gateway.Entry, tool: string) =>
  Effect.gen(function* () {
    const status = yield* Effect.either(gateway.registry.service.status(entry.workerId))
    if (Either.isLeft(status) || !gateway.registry.runsTasks(entry.workerId)) return false
    if (status.right.era === "modern") return true
    if (!gateway.lastTools.has(entry.workerId)) yield* Gateway.listTools(gateway, bundle)
    const listed = gateway.lastTools.get(entry.workerId)?.find((item) => item.name === tool) as Json | undefined
    const support = listed?.execution?.taskSupport
    return support === "required" || support === "optional"
  })

const start = (gateway: Gateway.Gateway, bundle: Gateway.Bundle, params: Json) =>
  Effect.gen(function* () {
    const route = Gateway.routeOf(gateway, bundle, String(params.name))
    if (route === undefined || !(yield* runsAsTask(gateway, bundle, route[0], route[1]))) return undefined
    const [entry, tool] = route
    const meta = forwarded(params._meta)
    const sent = { name: tool, arguments: params.arguments ?? {}, task: {}, ...(meta && { _meta: meta }) }
    const answer = (yield* Gateway.request(gateway, entry, "startTask", sent)) as Json
    // C75a
    return answer.task === undefined
      ? { resultType: "complete", ...answer }
      : { resultType: "task", ...flat(answer.task) }
  })

/** C75b */
const detailed = (gateway: Gateway.Gateway, bundle: Gateway.Bundle, taskId: string) =>
  Effect.gen(function* () {
    const task = (yield* ServeTasks.byId(gateway, bundle, "getTask", { taskId })) as Json
    const { _meta: _, ...shown } = flat(task)
    // C160: the gateway sends no tasks/update.
    if (task.status === "input_required") return { ...shown, inputRequests: task.inputRequests ?? {} }
    const read = task.status === "completed" ? task.result === undefined : task.status === "failed" && !task.error
    if (!read) return shown
    const outcome = yield* Effect.either(ServeTasks.byId(gateway, bundle, "taskResult", { taskId }))
    if (Either.isRight(outcome)) {
      const { _meta: __, ...result } = outcome.right
      return task.status === "completed"
        ? { ...shown, result: { resultType: "complete", ...result } }
        : { ...shown, error: { code: -32603, message: task.statusMessage ?? "the task failed", data: result } }
    }
    const ended = outcome.left
    if (ended._tag !== "TaskEnded") return yield* Effect.fail(ended)
    return { ...shown, error: { code: ended.code ?? -32603, message: ended.statusMessage ?? "the task failed" } }
  })

const noUpdate = () =>
  new InvalidInput({
    where: "arguments",
    path: "method",
    message: "the gateway sends no tasks/update: a task's questions are answered by its host",
    delivery: "not_sent"
  })

/** `undefined`: the SDK's handler answers it. */
const answerOf = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  method: string,
  params: Json
): Effect.Effect<Json | undefined, RequestError> => {
  if (!declares(params) || !ServeTasks.runsTasks(gateway, bundle)) return Effect.succeed(undefined)
  const taskId = String(params.taskId)
  switch (method) {
    case "tools/call":
      return start(gateway, bundle, params)
    case "tasks/get":
      return Effect.map(detailed(gateway, bundle, taskId), (task) => ({ resultType: "complete", ...task }))
    case "tasks/cancel":
      return Effect.as(ServeTasks.byId(gateway, bundle, "cancelTask", { taskId }), { resultType: "complete" })
    case "tasks/update":
      return Effect.fail(noUpdate())
    default:
      return Effect.succeed(undefined)
  }
}

/** `undefined` also for a grant that does not hold. @internal */
export const answer = async (
  gateway: Gateway.Gateway,
  bearer: string,
  run: Run,
  body: unknown,
  signal: AbortSignal
): Promise<Json | undefined> => {
  const message = body as Json | undefined
  const bundle = Gateway.bundleOf(gateway, bearer)
  if (bundle === undefined || typeof message?.method !== "string" || message.id === undefined) return undefined
  const outcome = await run(Effect.either(answerOf(gateway, bundle, message.method, message.params ?? {})), { signal })
  if (Either.isLeft(outcome)) return { jsonrpc: "2.0", id: message.id, error: Gateway.mcpErrorOf(outcome.left) }
  return outcome.right === undefined ? undefined : { jsonrpc: "2.0", id: message.id, result: outcome.right }
}
