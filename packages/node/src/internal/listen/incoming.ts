/**
 * Without tracing, a plain request is begun and answered here with no server fiber, and its `Interrupt` ends it here:
 * `RpcServer` would interrupt a forked handler and the next request could find the worker busy (C11).
 *
 * @internal
 */
import type * as Headers from "@effect/platform/Headers"
import * as Rpc from "@effect/rpc/Rpc"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Operations from "@mcp-worker/core/Operations"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Schema from "effect/Schema"
import type { HostRegistry } from "../host/service.js"
import type * as HostRequest from "../host/request.js"
import * as Grants from "./grants.js"
import { ListenRpcs, RequestPayload, streamedTag } from "./rpcs.js"

interface Call {
  readonly clientId: number
  readonly sent: HostRequest.Sent
  /** `undefined`: the server answers its own. */
  readonly answer: ((exit: Exit.Exit<unknown, RequestError>) => void) | undefined
}

export type Calls = Map<string, Call>

/** A peer's own value is replaced. */
const callHeader = "x-mcp-worker-call"

const keyOf = (clientId: number, requestId: string) => `${clientId}/${requestId}`

export const callOf = (headers: Headers.Headers): string | undefined => headers[callHeader]

export const began = (calls: Calls, key: string, sent: HostRequest.Sent): void => {
  calls.set(key, { clientId: Number(key.slice(0, key.indexOf("/"))), sent, answer: undefined })
}

export interface Listener {
  readonly registry: Pick<HostRegistry, "begin" | "refused" | "refusedBefore">
  readonly grants: Grants.Grants
  readonly acceptWorkerIds: boolean
  readonly closing: boolean
  readonly calls: Calls
}

interface Operation {
  readonly name: string
  readonly method: Operations.Any["method"]
  readonly streamed: boolean
  readonly encodeExit: (exit: Exit.Exit<unknown, RequestError>) => RpcMessage.ResponseExitEncoded["exit"]
}

const exitEncoder = (tag: string): Operation["encodeExit"] =>
  Schema.encodeSync(
    Rpc.exitSchema(ListenRpcs.requests.get(tag)!) as unknown as Schema.Schema<
      Exit.Exit<unknown, RequestError>,
      RpcMessage.ResponseExitEncoded["exit"]
    >
  )

/** With the server's exit encoder. */
const operations: ReadonlyMap<string, Operation> = new Map(
  Object.entries(Operations.requests).flatMap(([name, operation]) =>
    [false, true].map((streamed) => {
      const tag = streamed ? streamedTag(name) : name
      return [tag, { name, method: operation.method, streamed, encodeExit: exitEncoder(tag) }]
    })
  )
)

const isPayload = Schema.is(RequestPayload)

/** @internal */
export type Step =
  | { readonly _tag: "Server"; readonly message: RpcMessage.FromClientEncoded }
  /** C86 */
  | { readonly _tag: "Refused"; readonly frame: RpcMessage.ResponseExitEncoded }
  | { readonly _tag: "Taken" }

const taken: Step = { _tag: "Taken" }

/** @internal */
export const step = (
  listener: Listener,
  clientId: number,
  message: RpcMessage.FromClientEncoded,
  relay: boolean,
  write: (clientId: number, frame: RpcMessage.ResponseExitEncoded) => void
): Step => {
  switch (message._tag) {
    case "Request": {
      const operation = operations.get(message.tag)
      if (relay && operation !== undefined && typeof message.id === "string" && isPayload(message.payload)) {
        // These errors cross processes as fields: their stacks were most of a refusal's cost.
        const stackTraceLimit = Error.stackTraceLimit
        Error.stackTraceLimit = 0
        try {
          return operation.streamed
            ? (refusedNow(listener, message.id, operation, message.payload) ??
                toServer(clientId, withPeerTrace(message, message.payload)))
            : relayNow(listener, clientId, message, operation, message.payload, write)
        } finally {
          Error.stackTraceLimit = stackTraceLimit
        }
      }
      return toServer(clientId, message)
    }
    case "Interrupt": {
      const key = keyOf(clientId, message.requestId)
      const call = listener.calls.get(key)
      listener.calls.delete(key)
      if (call === undefined) return { _tag: "Server", message }
      call.sent.end("interrupted")
      if (call.answer === undefined) return { _tag: "Server", message }
      call.answer(Exit.interrupt(FiberId.none))
      return taken
    }
    default:
      return { _tag: "Server", message }
  }
}

/** Without `clientId` (the listener closes): every call, answered as interrupted. */
export const endTaken = (calls: Calls, clientId?: number): void => {
  for (const [key, call] of calls) {
    if (call.answer === undefined || (clientId !== undefined && call.clientId !== clientId)) continue
    calls.delete(key)
    call.sent.end("interrupted")
    if (clientId === undefined) call.answer(Exit.interrupt(FiberId.none))
  }
}

/** C117 @internal */
export const admitted = (
  listener: Listener,
  name: string,
  method: Operations.Any["method"],
  payload: typeof RequestPayload.Type
): Either.Either<Grants.Target, RequestError> => {
  const found = Grants.admitted(listener, name, payload)
  if (Either.isLeft(found)) {
    const target = Grants.target(listener, payload.id, name)
    const workerId = Either.isRight(target) ? target.right.workerId : undefined
    listener.registry.refusedBefore(workerId, method, "socket", found.left)
  }
  return found
}

const toServer = (clientId: number, message: RpcMessage.RequestEncoded): Step => {
  const headers = Array.isArray(message.headers)
    ? message.headers.filter((header) => !Array.isArray(header) || header[0] !== callHeader)
    : []
  headers.push([callHeader, keyOf(clientId, message.id)])
  return { _tag: "Server", message: { ...message, headers } }
}

/** @internal */
export const remaining = (deadline: number | undefined): number | undefined =>
  deadline === undefined ? undefined : Math.min(Math.max(0, deadline - Date.now()), ServerConfig.maxTimeoutMs)

// C83
const peerTrace = (
  message: RpcMessage.RequestEncoded,
  payload: typeof RequestPayload.Type
): OwnerProtocol.TraceContext | undefined =>
  payload.trace ??
  (typeof message.traceId === "string" && typeof message.spanId === "string"
    ? [message.traceId, message.spanId, message.sampled !== false]
    : undefined)

// C83
const withPeerTrace = (
  message: RpcMessage.RequestEncoded,
  payload: typeof RequestPayload.Type
): RpcMessage.RequestEncoded => {
  const trace = payload.trace === undefined ? peerTrace(message, payload) : undefined
  return trace === undefined ? message : { ...message, payload: { ...payload, trace } }
}

const relayNow = (
  listener: Listener,
  clientId: number,
  message: RpcMessage.RequestEncoded & { readonly id: string },
  operation: Operation,
  payload: typeof RequestPayload.Type,
  write: (clientId: number, frame: RpcMessage.ResponseExitEncoded) => void
): Step => {
  const requestId = message.id
  const found = admitted(listener, operation.name, operation.method, payload)
  if (Either.isLeft(found)) return refusal(requestId, operation, Exit.fail(Grants.renamed(found.left, payload.id)))
  const { grant, workerId } = found.right
  const key = keyOf(clientId, requestId)
  let refused: Exit.Exit<unknown, RequestError> | undefined
  let begun = false
  const answer = (exit: Exit.Exit<unknown, RequestError>) => {
    const shown = Exit.isSuccess(exit)
      ? Exit.succeed(Grants.shown(grant, operation.name, exit.value))
      : Exit.mapError(exit, (error) => Grants.renamed(error, payload.id, grant))
    if (!begun) return void (refused = shown)
    if (sent !== undefined) grant?.requests.delete(sent.requestId)
    listener.calls.delete(key)
    write(clientId, exitFrame(requestId, operation, shown))
  }
  // `begin` may refuse before it returns.
  const sent: HostRequest.Sent | undefined = listener.registry.begin(
    {
      id: workerId,
      method: operation.method,
      params: payload.params,
      budgetMs: remaining(payload.deadline),
      idleMs: payload.idleMs,
      onProgress: undefined,
      saveTo: payload.saveTo,
      // Without "fail" the worker's spill applies.
      spill: payload.spill,
      trace: peerTrace(message, payload),
      surface: "socket"
    },
    answer
  )
  begun = true
  if (sent === undefined) return refusal(requestId, operation, refused!)
  grant?.requests.add(sent.requestId)
  listener.calls.set(key, { clientId, sent, answer })
  return taken
}

const refusedNow = (
  listener: Listener,
  requestId: string,
  operation: Operation,
  payload: typeof RequestPayload.Type
): Step | undefined => {
  const found = admitted(listener, operation.name, operation.method, payload)
  const error = Either.isLeft(found)
    ? found.left
    : listener.registry.refused(found.right.workerId, operation.method, "socket")
  const grant = Either.isRight(found) ? found.right.grant : undefined
  return error === undefined
    ? undefined
    : refusal(requestId, operation, Exit.fail(Grants.renamed(error, payload.id, grant)))
}

const refusal = (requestId: string, operation: Operation, exit: Exit.Exit<unknown, RequestError>): Step => ({
  _tag: "Refused",
  frame: exitFrame(requestId, operation, exit)
})

/** Refused by its schema: the defect the server would send. */
const exitFrame = (
  requestId: string,
  operation: Operation,
  exit: Exit.Exit<unknown, RequestError>
): RpcMessage.ResponseExitEncoded => {
  try {
    return { _tag: "Exit", requestId, exit: operation.encodeExit(exit) }
  } catch (cause) {
    return { _tag: "Exit", requestId, exit: operation.encodeExit(Exit.die(String(cause))) }
  }
}
