/**
 * C44: `mcpg_<nonce><tag>`, the tag a truncated HMAC-SHA256 under a host-only key, checked in constant time before any
 * lookup so a forged grant costs what a real one does.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/caller/JsonValue"
import {
  fromCaller,
  HostUnavailable,
  InvalidInput,
  McpWorkerError,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as Tasks from "@mcp-worker/core/Tasks"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import type * as McpGrantsFace from "../../McpGrants.js"
import { budgetOf } from "../shared/budget.js"
import { checkSavePath } from "../transport/responseSave.js"
import type { RequestPayload } from "./rpcs.js"

/** @internal */
export class McpGrants extends Context.Tag("@mcp-worker/node/McpGrants")<McpGrants, McpGrantsFace.McpGrantsService>() {}

/** @internal */
export interface Grant {
  readonly workerId: string
  readonly operations: ReadonlySet<string>
  /** `undefined`: every tool. */
  readonly tools: ReadonlySet<string> | undefined
  /** `Infinity` without a ttl. */
  readonly expiresAt: number
  /** A real path; `undefined`: no `saveTo`. */
  readonly saveDir: string | undefined
  /** C71 */
  readonly tasks: Set<string>
  /** C119 */
  readonly requests: Set<string>
}

/** @internal */
export interface Grants {
  readonly key: Uint8Array
  readonly byNonce: Map<string, Grant>
}

const prefix = "mcpg_"
const nonceChars = 22
const tagBytes = 16
const tagChars = 22
const grantLength = prefix.length + nonceChars + tagChars

/** @internal */
export const defaultOperations: ReadonlyArray<McpGrantsFace.GrantOperation> = [
  ...(Object.keys(Operations.requests) as Array<keyof Operations.Requests>),
  "status",
  "cancel",
  "events"
]

const known: ReadonlySet<string> = new Set<string>([...defaultOperations, "close"])

/** @internal */
export const make = (): Grants => ({ key: randomBytes(32), byNonce: new Map() })

const tagOf = (grants: Grants, nonce: string): Buffer =>
  createHmac("sha256", grants.key).update(nonce).digest().subarray(0, tagBytes)

const invalid = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

const stringList = (value: unknown, path: string): Either.Either<ReadonlyArray<string> | undefined, InvalidInput> => {
  if (value === undefined) return Either.right(undefined)
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.length === 0)) {
    return Either.left(invalid(path, `${path.slice("options.".length)} must be an array of non-empty strings`))
  }
  return Either.right(value as ReadonlyArray<string>)
}

/** @internal */
export const issue = (
  grants: Grants,
  workerId: string,
  options: McpGrantsFace.GrantOptions | undefined,
  now: number
): Either.Either<string, InvalidInput> =>
  Either.gen(function* () {
    const operations = (yield* stringList(options?.operations, "options.operations")) ?? defaultOperations
    const unknownOperation = operations.find((operation) => !known.has(operation))
    if (unknownOperation !== undefined) {
      return yield* Either.left(
        invalid("options.operations", `no operation is named ${JSON.stringify(unknownOperation)}`)
      )
    }
    const tools = yield* stringList(options?.tools, "options.tools")
    const saveDir = yield* saveDirOf(options?.saveDir)
    const ttl = yield* Either.mapLeft(budgetOf(options?.ttl as Duration.DurationInput | undefined), (message) =>
      invalid("options.ttl", message)
    )
    const nonce = randomBytes(16).toString("base64url")
    grants.byNonce.set(nonce, {
      workerId,
      operations: new Set(operations),
      tools: tools === undefined ? undefined : new Set(tools),
      expiresAt: ttl === undefined ? Infinity : now + ttl,
      saveDir,
      tasks: new Set(),
      requests: new Set()
    })
    return `${prefix}${nonce}${tagOf(grants, nonce).toString("base64url")}`
  })

const saveDirOf = (dir: unknown): Either.Either<string | undefined, InvalidInput> => {
  if (dir === undefined) return Either.right(undefined)
  if (typeof dir !== "string" || !path.isAbsolute(dir)) {
    return Either.left(invalid("options.saveDir", "saveDir must be an absolute path"))
  }
  return Either.mapLeft(
    Either.try(() => fs.realpathSync(dir)),
    () => invalid("options.saveDir", "saveDir must be an existing directory")
  )
}

/**
 * The owner renames into place, so only the directory's real path counts.
 *
 * @internal
 */
export const isUnder = (dir: string, target: string): boolean => {
  if (!path.isAbsolute(target)) return false
  const parent = Either.getOrUndefined(Either.try(() => fs.realpathSync(path.dirname(target))))
  return parent !== undefined && (parent === dir || parent.startsWith(dir + path.sep))
}

// Any string is compared against a tag.
const filler = Buffer.alloc(tagChars)

/** @internal */
export const resolve = (grants: Grants, id: string, now: number): Grant | undefined => {
  const shaped = id.length === grantLength && id.startsWith(prefix)
  const nonce = shaped ? id.slice(prefix.length, prefix.length + nonceChars) : "-"
  // Text, not bytes: 4 padding bits would let two grants decode to one tag.
  const presented = shaped ? Buffer.from(id.slice(prefix.length + nonceChars), "latin1") : filler
  const expected = Buffer.from(tagOf(grants, nonce).toString("base64url"), "latin1")
  const genuine = presented.length === tagChars && timingSafeEqual(presented, expected) && shaped
  if (!genuine) return undefined
  const grant = grants.byNonce.get(nonce)
  if (grant === undefined) return undefined
  if (now > grant.expiresAt) {
    grants.byNonce.delete(nonce)
    return undefined
  }
  return grant
}

/**
 * For grants a holder issued and never handed out (the gateway's): no one else presents them, so no tag check.
 * Grants a holder issued and never handed out (the gateway's): no tag check.
 * @internal
 */
export const resolveOwn = (grants: Grants, id: string, now: number): Grant | undefined => {
  const grant = grants.byNonce.get(id.slice(prefix.length, prefix.length + nonceChars))
  return grant !== undefined && now <= grant.expiresAt ? grant : undefined
}

/** @internal */
export const revoke = (grants: Grants, id: string): boolean => {
  if (resolve(grants, id, Date.now()) === undefined) return false
  return grants.byNonce.delete(id.slice(prefix.length, prefix.length + nonceChars))
}

/** @internal */
export const sweep = (grants: Grants, isOpen: (workerId: string) => boolean, now: number): void => {
  for (const [nonce, grant] of grants.byNonce) {
    if (now > grant.expiresAt || !isOpen(grant.workerId)) grants.byNonce.delete(nonce)
  }
}

/** C71 @internal */
export const taskRefusal = (grant: Grant, name: string, params: JsonValue.JsonObject): InvalidInput | undefined => {
  if (!Tasks.byId.has(name)) return undefined
  const taskId = params.taskId
  return typeof taskId === "string" && grant.tasks.has(taskId) ? undefined : notItsTask()
}

/** C71: one answer whether or not the task exists. @internal */
export const notItsTask = (): InvalidInput => invalid("taskId", "this grant started no task of that id")

/** C71 @internal */
export const taskShown = (grant: Grant, name: string, result: unknown): unknown => {
  if (name === "startTask") {
    const taskId = (result as { task?: { taskId?: unknown } } | undefined)?.task?.taskId
    if (typeof taskId === "string") grant.tasks.add(taskId)
    return result
  }
  if (name !== "listTasks") return result
  const list = result as { tasks?: ReadonlyArray<{ taskId?: unknown }> }
  return {
    ...list,
    tasks: (list.tasks ?? []).filter((task) => typeof task.taskId === "string" && grant.tasks.has(task.taskId))
  }
}

/** C47 @internal */
export const shownIn = (grants: Grants, text: string, now: number): boolean => {
  for (let at = text.indexOf(`"${prefix}`); at !== -1; at = text.indexOf(`"${prefix}`, at + 1)) {
    const end = at + 1 + grantLength
    if (text[end] === '"' && resolve(grants, text.slice(at + 1, end), now) !== undefined) return true
  }
  return false
}

const encodeError = Schema.encodeSync(McpWorkerError)
const decodeError = Schema.decodeUnknownSync(McpWorkerError)

export interface Target {
  readonly workerId: string
  readonly grant: Grant | undefined
}

/** One refusal for a bad grant, a disallowed operation and a plain id. */
export const target = (
  listener: { readonly grants: Grants; readonly acceptWorkerIds: boolean; readonly ownIds?: boolean },
  id: string,
  operation: string
): Either.Either<Target, UnknownWorker> => {
  const grant = (listener.ownIds === true ? resolveOwn : resolve)(listener.grants, id, Date.now())
  if (grant !== undefined && grant.operations.has(operation)) return Either.right({ workerId: grant.workerId, grant })
  if (grant === undefined && listener.acceptWorkerIds) return Either.right({ workerId: id, grant: undefined })
  return Either.left(new UnknownWorker({ workerId: id, delivery: "not_sent" }))
}

/** So the error names what the caller presented. */
export const renamed = <E extends McpWorkerError>(error: E, id: string, grant?: Grant): E => {
  const hidden = grant === undefined ? undefined : hiddenOf(error, grant)
  if (hidden === undefined && (!("workerId" in error) || error.workerId === id)) return error
  return decodeError({ ...encodeError(error), ...hidden, workerId: id }) as E
}

// C119
const hiddenOf = (error: McpWorkerError, grant: Grant): Record<string, string> | undefined =>
  error._tag === "WorkerBusy" && !grant.requests.has(error.requestId)
    ? { requestId: "" }
    : error._tag === "WorkerFailed"
      ? { message: failureWords(error.kind) }
      : undefined

const failureWords = (kind: string): string => `the worker's connection failed (${kind})`

/** C119: a new field stays hidden until chosen here. */
export const statusShown = (grant: Grant | undefined, presented: string, status: WorkerStatus): WorkerStatus =>
  grant === undefined
    ? { ...status, workerId: presented }
    : {
        workerId: presented,
        state: status.state,
        busy: status.busy,
        requestId: status.requestId !== null && grant.requests.has(status.requestId) ? status.requestId : null,
        pid: null,
        threadId: null,
        ownerPid: null,
        era: status.era,
        protocolVersion: status.protocolVersion,
        server: status.server,
        lastFailure:
          status.lastFailure === null
            ? null
            : {
                kind: status.lastFailure.kind,
                message: failureWords(status.lastFailure.kind),
                at: status.lastFailure.at
              },
        cleanup: status.cleanup,
        notifications: status.notifications
      }

/** The owner must get an object's JSON text. */
export const checked = (
  target: Target,
  name: string,
  payload: typeof RequestPayload.Type,
  parsed?: JsonValue.JsonObject
): InvalidInput | undefined => {
  const params =
    parsed === undefined ? JsonValue.decode(payload.params, { where: "arguments", root: "params" }) : undefined
  if (params !== undefined && !params.ok) return fromCaller(params.error) as InvalidInput
  const object = parsed ?? params?.value
  if (!JsonValue.isJsonObject(object)) return invalid("params", "the request params must be a plain object")
  const grant = target.grant
  const taskRefused = grant === undefined ? undefined : taskRefusal(grant, name, object)
  if (taskRefused !== undefined) return taskRefused
  if (grant?.tools !== undefined && (name === "callTool" || name === "startTask")) {
    const tool = object.name
    if (typeof tool !== "string" || !grant.tools.has(tool))
      return invalid("name", "this grant does not allow that tool")
  }
  if (payload.saveTo === undefined) return undefined
  if (grant !== undefined && (grant.saveDir === undefined || !isUnder(grant.saveDir, payload.saveTo))) {
    return invalid("options.saveTo", "this grant does not allow saveTo there")
  }
  const problem = checkSavePath(payload.saveTo)
  return problem === undefined ? undefined : invalid("options.saveTo", problem)
}

export const closingError = (): HostUnavailable =>
  new HostUnavailable({ message: "the mcp-worker host is closing; the request was not sent", delivery: "not_sent" })

/** Not sent. */
export const admitted = (
  listener: {
    readonly grants: Grants
    readonly acceptWorkerIds: boolean
    readonly closing: boolean
    readonly ownIds?: boolean
  },
  name: string,
  payload: typeof RequestPayload.Type,
  parsed?: JsonValue.JsonObject
): Either.Either<Target, RequestError> => {
  if (listener.closing) return Either.left(closingError())
  const found = target(listener, payload.id, name)
  if (Either.isLeft(found)) return found
  const refused = checked(found.right, name, payload, parsed)
  return refused === undefined ? found : Either.left(refused)
}

/** C44, C71 */
export const shown = (grant: Grant | undefined, name: string, result: unknown): unknown => {
  if (grant !== undefined && (name === "startTask" || name === "listTasks")) return taskShown(grant, name, result)
  const tools = grant?.tools
  if (tools === undefined || name !== "listTools") return result
  const list = result as { tools?: ReadonlyArray<{ name?: unknown }> }
  return { ...list, tools: (list.tools ?? []).filter((tool) => typeof tool.name === "string" && tools.has(tool.name)) }
}
