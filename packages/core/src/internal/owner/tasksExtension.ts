/**
 * Tasks on the 2026-07-28 revision, where they are the `io.modelcontextprotocol/tasks` extension (C75, C75a–C75c). The five
 * task operations keep the model of the 2025-11-25 revision (C70–C74); this module is where the eras differ. The
 * client declares the extension in each request's `_meta`; a start's flat task (`resultType: "task"`) is the one
 * answer the SDK's client refuses (`UNSUPPORTED_RESULT_TYPE`), so a start alone goes through its request funnel with
 * a codec that reads that answer too. `taskResult` polls `tasks/get`; input requests go to the host's handlers and
 * their answers back with `tasks/update`.
 */
import {
  type Client,
  ProtocolError,
  ProtocolErrorCode,
  specTypeSchemas,
  type StandardSchemaV1
} from "@modelcontextprotocol/client"
import { InvalidInput } from "../../McpWorkerError.js"
import type * as OwnerProtocol from "../../OwnerProtocol.js"
import { TaskEndedWithout, without } from "./errors.js"
import { askHost } from "./serverRequests.js"
import type { Connection, Machine } from "./state.js"

/** The extension's identifier. @internal */
export const extensionId = "io.modelcontextprotocol/tasks"

const capabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

/** The code of a server that needs a client capability the request did not declare. @internal */
export const missingCapabilityCode = -32021

type Json = Record<string, any>

interface RequestOptions {
  readonly signal: AbortSignal
  readonly timeout: number
  readonly headers?: Record<string, string>
}

/** The SDK client's request funnel and the codec of its era: the one way to read a flat task below `request`. */
interface Funnel {
  _resolveOutboundCodec(method: string): Codec
  _requestWithSchemaViaCodec(codec: Codec, request: Json, schema: StandardSchemaV1, options: RequestOptions): any
  _outboundMetaEnvelope(): Json | undefined
}

interface Codec {
  decodeResult(method: string, raw: unknown): Json
}

const anything: StandardSchemaV1 = {
  "~standard": { version: 1, vendor: "mcp-worker", validate: (value) => ({ value }) }
}

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
  // The funnel is the SDK's own, not its public face: a client without it could not read the task it would start.
  const funnel = connection.client as unknown as Partial<Funnel>
  if (isStart && (typeof funnel._requestWithSchemaViaCodec !== "function" || !funnel._resolveOutboundCodec)) {
    return refused("name", "this MCP client cannot read a task answer (its request funnel is not there)")
  }
  return undefined
}

// The request's `_meta` with the extension declared beside the client's own capabilities, which it would replace.
const declared = (client: Client, params: Json): Json => {
  const envelope = (client as unknown as Funnel)._outboundMetaEnvelope?.() ?? {}
  const capabilities = isObject(envelope[capabilitiesKey]) ? envelope[capabilitiesKey] : {}
  const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {}
  const meta = isObject(params._meta) ? params._meta : {}
  return {
    ...params,
    _meta: { ...meta, [capabilitiesKey]: { ...capabilities, extensions: { ...extensions, [extensionId]: {} } } }
  }
}

/** The 2025-11-25 shape of a task (`ttl`, `pollInterval`), from the extension's (`ttlMs`, `pollIntervalMs`). */
const toTask = (flat: Json): Json => {
  const { resultType: _resultType, ttlMs, pollIntervalMs, ...rest } = flat
  return { ...rest, ttl: ttlMs ?? null, ...(pollIntervalMs === undefined ? {} : { pollInterval: pollIntervalMs }) }
}

const isTask = (value: unknown): value is Json =>
  isObject(value) &&
  typeof value.taskId === "string" &&
  typeof value.status === "string" &&
  typeof value.createdAt === "string" &&
  typeof value.lastUpdatedAt === "string"

const malformed = (what: string) =>
  new ProtocolError(ProtocolErrorCode.InternalError, `the server's ${what} is no task`)

/** `tools/call` with the extension declared: a flat task becomes `{ task }`; a complete result stands. */
const start = (client: Client, params: Json, options: RequestOptions): Promise<unknown> => {
  const { task: _task, ...call } = params
  const funnel = client as unknown as Funnel
  const codec = funnel._resolveOutboundCodec("tools/call")
  const readsTasks: Codec = {
    ...codec,
    decodeResult: (method, raw) =>
      isObject(raw) && raw.resultType === "task" ? { kind: "complete", result: raw } : codec.decodeResult(method, raw)
  }
  const request = { method: "tools/call", params: declared(client, call) }
  return Promise.resolve(funnel._requestWithSchemaViaCodec(readsTasks, request, anything, options)).then((result) => {
    if (!isObject(result) || result.resultType !== "task") return result
    if (!isTask(result)) throw malformed("answer to the start")
    return { task: toTask(result) }
  })
}

// C75c: over Streamable HTTP the client's transport routes each of these by its `params.taskId` (`Mcp-Name`).
// A completed task's result is the tool's: checked against the protocol's schema, as any result (C25).
const toolResult = async (result: unknown): Promise<unknown> => {
  const checked = await specTypeSchemas.CallToolResult["~standard"].validate(result)
  if (checked.issues !== undefined) throw malformed("completed task's result")
  return result
}

const byId = (client: Client, method: string, taskId: string, extra: Json, options: RequestOptions) =>
  client.request({ method, params: declared(client, { taskId, ...extra }) } as never, anything, options)

const detailed = (client: Client, taskId: string, options: RequestOptions): Promise<Json> =>
  byId(client, "tasks/get", taskId, {}, options).then((result) => {
    if (!isTask(result)) throw malformed("tasks/get answer")
    return result
  })

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

const askable = new Set<string>(["elicitation/create", "sampling/createMessage", "roots/list"])

/** Each input request not answered yet, to the host's handlers; their answers go back in one `tasks/update` (C75b). */
const answerInputs = async (
  machine: Machine,
  client: Client,
  taskId: string,
  requests: Json,
  answered: Set<string>,
  options: RequestOptions
): Promise<void> => {
  const inputResponses: Json = {}
  for (const [key, request] of Object.entries(requests)) {
    if (answered.has(key) || !isObject(request) || !askable.has(request.method)) continue
    answered.add(key)
    inputResponses[key] = await askHost(
      machine,
      request.method as OwnerProtocol.ServerMethod,
      request.params,
      options.signal
    )
  }
  if (Object.keys(inputResponses).length > 0) await byId(client, "tasks/update", taskId, { inputResponses }, options)
}

// C123: a task that ended without a result says which end it met; a failure's words are its status message, else its
// error's, the task's id taken out (C71).
const endedWithout = (taskId: string, task: Json): TaskEndedWithout => {
  const error = isObject(task.error) ? task.error : {}
  const words = typeof task.statusMessage === "string" ? task.statusMessage : error.message
  return new TaskEndedWithout(
    task.status,
    without(taskId, typeof words === "string" ? words : undefined),
    task.status === "failed" && typeof error.code === "number" ? error.code : undefined
  )
}

/**
 * `taskResult` on this revision: `tasks/get` until the task ends, within the request's budget (its signal), answering
 * its input requests on the way; the result of a completed task, the error of a failed one (C73, C75b).
 */
const awaitResult = async (
  machine: Machine,
  client: Client,
  taskId: string,
  options: RequestOptions
): Promise<unknown> => {
  const answered = new Set<string>()
  for (;;) {
    const task = await detailed(client, taskId, options)
    if (task.status === "completed") return toolResult(task.result)
    if (task.status === "failed" || task.status === "cancelled") throw endedWithout(taskId, task)
    if (task.status === "input_required" && isObject(task.inputRequests)) {
      await answerInputs(machine, client, taskId, task.inputRequests, answered, options)
    }
    if (options.signal.aborted) throw new ProtocolError(ProtocolErrorCode.InternalError, "the wait was cancelled")
    await pause(typeof task.pollIntervalMs === "number" ? Math.max(10, task.pollIntervalMs) : 1_000, options.signal)
  }
}

/**
 * A task operation on a 2026-07-28 connection, or `undefined` when the request is no task operation. Every request it
 * sends passes the SDK client's funnel (its timeout, its exact cancel on abort).
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
  const { client } = connection
  // The stdio transport keeps each raw response for the request it answers; these answers are mapped, not raw.
  const mapped = (promise: Promise<unknown>) =>
    promise.finally(() => {
      connection.transport.takeResponse?.()
    })
  if (method === "tools/call" && params.task !== undefined) return mapped(start(client, params, options))
  const taskId = typeof params.taskId === "string" ? params.taskId : undefined
  if (taskId === undefined) return undefined
  switch (method) {
    case "tasks/get":
      return mapped(detailed(client, taskId, options).then(toTask))
    case "tasks/result":
      return mapped(awaitResult(machine, client, taskId, options))
    case "tasks/cancel":
      // C74 on this revision: the cancel is an ack; the state after it is read with the next tasks/get.
      return mapped(
        byId(client, "tasks/cancel", taskId, {}, options).then(() => detailed(client, taskId, options).then(toTask))
      )
    default:
      return undefined
  }
}

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
