/**
 * What a socket caller's id names and may do: the worker behind a grant (or a plain id, where the listener accepts
 * them), its request checked against the grant before anything is sent, and what the grant lets it see (C44).
 *
 * @internal
 */
import {
  HostUnavailable,
  InvalidInput,
  McpWorkerError,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as JsonValue from "@mcp-worker/core/JsonValue"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { checkSavePath } from "../transport/responseSave.js"
import * as Grants from "./grants.js"
import type { RequestPayload } from "./rpcs.js"

const encodeError = Schema.encodeSync(McpWorkerError)
const decodeError = Schema.decodeUnknownSync(McpWorkerError)

/** What a caller's id names for one operation: the worker, and the grant it came through. */
export interface Target {
  readonly workerId: string
  readonly grant: Grants.Grant | undefined
}

/**
 * The worker `id` names for `operation`, or `UnknownWorker` naming `id`: an unknown, expired, revoked or forged grant,
 * an operation the grant does not allow, and a plain id where only grants are accepted all look alike.
 */
export const target = (
  listener: { readonly grants: Grants.Grants; readonly acceptWorkerIds: boolean },
  id: string,
  operation: string
): Either.Either<Target, UnknownWorker> => {
  const grant = Grants.resolve(listener.grants, id, Date.now())
  if (grant !== undefined && grant.operations.has(operation)) return Either.right({ workerId: grant.workerId, grant })
  if (grant === undefined && listener.acceptWorkerIds) return Either.right({ workerId: id, grant: undefined })
  return Either.left(new UnknownWorker({ workerId: id, delivery: "not_sent" }))
}

/** An error as the caller must see it: naming what it presented (re-made through its schema, fields and all). */
export const renamed = <E extends McpWorkerError>(error: E, id: string): E => {
  if (!("workerId" in error) || error.workerId === id) return error
  return decodeError({ ...encodeError(error), workerId: id }) as E
}

const invalid = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

/**
 * What a caller sent, checked as the host server checks a remote thread's (the owner must get an object's JSON text),
 * and against its grant: the tool allow-list, and where `saveTo` may write (only under the grant's `saveDir`: a path of
 * the host's file system, which the owner writes). Nothing is sent before these pass.
 */
export const checked = (
  target: Target,
  name: string,
  payload: typeof RequestPayload.Type
): InvalidInput | undefined => {
  const params = JsonValue.decode(payload.params, { where: "arguments", root: "params" })
  if (Either.isLeft(params)) return params.left
  if (!JsonValue.isJsonObject(params.right)) return invalid("params", "the request params must be a plain object")
  const grant = target.grant
  const taskRefused = grant === undefined ? undefined : Grants.taskRefusal(grant, name, params.right)
  if (taskRefused !== undefined) return taskRefused
  if (grant?.tools !== undefined && (name === "callTool" || name === "startTask")) {
    const tool = params.right.name
    if (typeof tool !== "string" || !grant.tools.has(tool))
      return invalid("name", "this grant does not allow that tool")
  }
  if (payload.saveTo === undefined) return undefined
  if (grant !== undefined && (grant.saveDir === undefined || !Grants.isUnder(grant.saveDir, payload.saveTo))) {
    return invalid("options.saveTo", "this grant does not allow saveTo there")
  }
  const problem = checkSavePath(payload.saveTo)
  return problem === undefined ? undefined : invalid("options.saveTo", problem)
}

/** What a call that arrives while the host closes is told. */
export const closingError = (): HostUnavailable =>
  new HostUnavailable({ message: "the mcp-worker host is closing; the request was not sent", delivery: "not_sent" })

/**
 * A request of the table as the listener admits it, before the host is asked: the host not closing, the worker its
 * id names for `name`, and what it sent checked against the grant. Whatever fails here was not sent.
 */
export const admitted = (
  listener: { readonly grants: Grants.Grants; readonly acceptWorkerIds: boolean; readonly closing: boolean },
  name: string,
  payload: typeof RequestPayload.Type
): Either.Either<Target, RequestError> => {
  if (listener.closing) return Either.left(closingError())
  const found = target(listener, payload.id, name)
  if (Either.isLeft(found)) return found
  const refused = checked(found.right, name, payload)
  return refused === undefined ? found : Either.left(refused)
}

/** `listTools` through a grant with an allow-list shows only those tools; its tasks are its own (C71). */
export const shown = (grant: Grants.Grant | undefined, name: string, result: unknown): unknown => {
  if (grant !== undefined && (name === "startTask" || name === "listTasks"))
    return Grants.taskShown(grant, name, result)
  const tools = grant?.tools
  if (tools === undefined || name !== "listTools") return result
  const list = result as { tools?: ReadonlyArray<{ name?: unknown }> }
  return { ...list, tools: (list.tools ?? []).filter((tool) => typeof tool.name === "string" && tools.has(tool.name)) }
}
