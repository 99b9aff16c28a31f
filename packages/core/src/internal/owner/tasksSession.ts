/**
 * C75: loaded with the first task operation, so an owner that runs none never evaluates the package.
 *
 * @internal
 */
import {
  type ApplicationInputRequest,
  JsonRpcResponseError,
  type TaskEnabledSession,
  TaskFailedError,
  type TaskView,
  withTasks
} from "@modelcontextprotocol/ext-tasks/client"
import { ProtocolDecodeError, taskId as asTaskId } from "@modelcontextprotocol/ext-tasks/core"
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import { TaskEndedWithout, without } from "./errors.js"
import { askHost } from "./serverRequests.js"
import type { Connection, Machine, Modern } from "./state.js"
import { operationPort, type RequestOptions } from "./tasksDispatch.js"

type Json = Record<string, any>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** The 2025-11-25 shape of a task. */
const toTask = (flat: Json): Json => {
  const { resultType: _resultType, ttlMs, pollIntervalMs, ...rest } = flat
  return { ...rest, ttl: ttlMs ?? null, ...(pollIntervalMs === undefined ? {} : { pollInterval: pollIntervalMs }) }
}

const methods = {
  elicitation: "elicitation/create",
  sampling: "sampling/createMessage",
  roots: "roots/list"
} as const satisfies Record<ApplicationInputRequest["kind"], OwnerProtocol.ServerMethod>

/** C74, C31 */
const operate = async <A>(
  machine: Machine,
  connection: Connection,
  modern: Modern,
  options: RequestOptions,
  run: (session: TaskEnabledSession) => Promise<A>
): Promise<A> => {
  const port = operationPort(connection, modern.framing, options)
  const session = withTasks(port, {
    // C75a: the server decides which call becomes a task.
    tools: { currentTool: () => undefined },
    maxInputRounds: modern.maxInputRounds,
    onInputRequest: (request, context) =>
      askHost(machine, methods[request.kind], request.params ?? {}, context.signal ?? options.signal)
  })
  try {
    return await run(session).catch((error: unknown) => Promise.reject(fromPackage(error)))
  } finally {
    port.end()
  }
}

// As the SDK's client says them, so the owner reads one kind of error.
const fromPackage = (error: unknown): unknown => {
  if (error instanceof JsonRpcResponseError) return new ProtocolError(error.code, error.message, error.data)
  if (error instanceof ProtocolDecodeError) return { issues: [{ message: "the answer does not match the schema" }] }
  const words = error instanceof Error ? error.message : ""
  const rounds = /exceeded (\d+) input-required rounds/.exec(words)
  if (rounds !== null)
    return new SdkError(SdkErrorCode.InputRequiredRoundsExceeded, words, { rounds: Number(rounds[1]) })
  return error
}

// `resultType` is the wire's, not the tool's.
const complete = (result: unknown): Json => {
  const { resultType: _resultType, ...rest } = result as Json
  return rest
}

/** C75a */
const start = (session: TaskEnabledSession, params: Json, options: RequestOptions): Promise<unknown> =>
  session
    .callTool(params.name, params.arguments, {
      signal: options.signal,
      requestTimeoutMs: options.timeout,
      ...(isObject(params._meta) ? { metadata: params._meta } : {}),
      ...(options.headers === undefined ? {} : { headers: options.headers })
    })
    .then(async (execution) => {
      if (execution.kind === "immediate") {
        const outcome = await execution.result()
        if (outcome.status !== "completed") throw (outcome as { error?: unknown }).error
        return complete(outcome.result)
      }
      // C70: the task is the caller's to wait for.
      const events = execution.updates()[Symbol.asyncIterator]()
      await execution.detach()
      const first = await events.next()
      return { task: toTask((first.value as { readonly task: TaskView }).task.raw) }
    })

// C123, C71
const resultOf = async (session: TaskEnabledSession, taskId: string, options: RequestOptions): Promise<unknown> => {
  const reference = {
    endpointId: session.endpointId,
    generation: "v2",
    taskId: asTaskId(taskId),
    originalOperation: "tools/call"
  } as const
  const execution = await session.resumeTask(reference, { signal: options.signal, requestTimeoutMs: options.timeout })
  const outcome = await execution.result()
  if (outcome.status === "completed") return complete(outcome.result)
  const task = outcome.task
  if (task === undefined || (task.status !== "failed" && task.status !== "cancelled")) {
    const error = (outcome as { error?: TaskFailedError }).error
    throw error?.cause ?? error
  }
  const error = outcome.status === "failed" ? outcome.error : undefined
  const code = error instanceof TaskFailedError ? error.code : undefined
  throw new TaskEndedWithout(task.status, without(taskId, task.statusMessage ?? error?.message), code)
}

/** @internal */
export const send = (
  machine: Machine,
  connection: Connection,
  modern: Modern,
  method: OwnerProtocol.Method,
  params: Json,
  options: RequestOptions
): Promise<unknown> | undefined => {
  // These answers are mapped, not the transport's raw response.
  const mapped = (run: (session: TaskEnabledSession) => Promise<unknown>) =>
    operate(machine, connection, modern, options, run).finally(() => {
      connection.transport.takeResponse?.()
    })
  if (method === "tools/call" && params.task !== undefined) {
    const { task: _task, ...call } = params
    return mapped((session) => start(session, call, options))
  }
  const taskId = typeof params.taskId === "string" ? params.taskId : undefined
  if (taskId === undefined) return undefined
  const task = (session: TaskEnabledSession) => session.task(asTaskId(taskId), { requestTimeoutMs: options.timeout })
  const snapshot = (session: TaskEnabledSession) => task(session).snapshot(options.signal)
  switch (method) {
    case "tasks/get":
      return mapped((session) => snapshot(session).then((view) => toTask(view.raw)))
    case "tasks/result":
      return mapped((session) => resultOf(session, taskId, options))
    case "tasks/cancel":
      // C75c
      return mapped((session) =>
        task(session)
          .cancel(options.signal)
          .then(() => snapshot(session).then((view) => toTask(view.raw)))
      )
    default:
      return undefined
  }
}
