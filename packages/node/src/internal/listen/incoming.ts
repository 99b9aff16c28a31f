/**
 * A peer's frame in the step that reads it, before `RpcServer` does.
 *
 * - A request the host would refuse now is answered here (C86): its payload is checked, the listener admits it
 *   (`Grants.admitted`), and the host says from its own record of the worker whether it would take it
 *   (`HostRegistry.refused`: busy, closing, gone). The refusal is encoded through the operation's own exit schema and
 *   written, with no fiber of the server and nothing kept.
 * - Any other request is stamped with its call's key and goes on to the server, which begins it.
 * - An `Interrupt` ends its call's request here. `RpcServer` interrupts a handler's fiber as a fork, so the peer's
 *   next request could begin before the interrupted one's finalizer freed the worker (C11).
 *
 * @internal
 */
import type * as Headers from "@effect/platform/Headers"
import * as Rpc from "@effect/rpc/Rpc"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { HostRegistry } from "../host/layer.js"
import type * as HostRequest from "../host/request.js"
import * as Grants from "./grants.js"
import { ListenRpcs, RequestPayload, streamedTag } from "./rpcs.js"

/** The calls of one listener whose requests are begun and not yet answered, by `keyOf`. */
export type Calls = Map<string, HostRequest.Sent>

/** The header stamped on every request frame: its call's key (a peer's own value is replaced). */
const callHeader = "x-mcp-worker-call"

const keyOf = (clientId: number, requestId: string) => `${clientId}/${requestId}`

/** The key of the call a handler serves, from the headers `RpcServer` gives it. */
export const callOf = (headers: Headers.Headers): string | undefined => headers[callHeader]

/** A frame from a peer, before the server reads it: a request stamped with its key, an interrupt ending its call. */
export const relayed = (
  calls: Calls,
  clientId: number,
  message: RpcMessage.FromClientEncoded
): RpcMessage.FromClientEncoded => {
  switch (message._tag) {
    case "Request": {
      const headers = Array.isArray(message.headers)
        ? message.headers.filter((header) => !Array.isArray(header) || header[0] !== callHeader)
        : []
      headers.push([callHeader, keyOf(clientId, message.id)])
      return { ...message, headers }
    }
    case "Interrupt": {
      const key = keyOf(clientId, message.requestId)
      const sent = calls.get(key)
      calls.delete(key)
      sent?.end("interrupted")
      return message
    }
    default:
      return message
  }
}

/** What the check needs of a listener. */
export interface Listener {
  readonly registry: Pick<HostRegistry, "refused">
  readonly grants: Grants.Grants
  readonly acceptWorkerIds: boolean
  readonly closing: boolean
}

interface Operation {
  readonly name: string
  readonly method: Operations.Any["method"]
  readonly encodeExit: (exit: Exit.Exit<unknown, RequestError>) => RpcMessage.ResponseExitEncoded["exit"]
}

const exitEncoder = (tag: string): Operation["encodeExit"] =>
  Schema.encodeSync(
    Rpc.exitSchema(ListenRpcs.requests.get(tag)!) as unknown as Schema.Schema<
      Exit.Exit<unknown, RequestError>,
      RpcMessage.ResponseExitEncoded["exit"]
    >
  )

/** Every request of the table by its tag, plain and streamed, with the exit encoder the server would use. */
const operations: ReadonlyMap<string, Operation> = new Map(
  Object.entries(Operations.requests).flatMap(([name, operation]) =>
    [name, streamedTag(name)].map((tag) => [tag, { name, method: operation.method, encodeExit: exitEncoder(tag) }])
  )
)

const isPayload = Schema.is(RequestPayload)

/** The `Exit` frame that refuses `message` now, or `undefined` when the server is to read it. @internal */
export const refusal = (
  listener: Listener,
  message: RpcMessage.FromClientEncoded
): RpcMessage.ResponseExitEncoded | undefined => {
  if (message._tag !== "Request" || typeof message.id !== "string") return undefined
  const operation = operations.get(message.tag)
  if (operation === undefined || !isPayload(message.payload)) return undefined
  // The errors made here go to another process as their fields: a stack of each, taken from the depth of the fiber
  // runtime, was most of what a refusal cost.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return refused(listener, message.id, operation, message.payload)
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
}

const refused = (
  listener: Listener,
  requestId: string,
  operation: Operation,
  payload: typeof RequestPayload.Type
): RpcMessage.ResponseExitEncoded | undefined => {
  const found = Grants.admitted(listener, operation.name, payload)
  const error = Either.isLeft(found)
    ? found.left
    : listener.registry.refused(found.right.workerId, operation.method, "socket")
  if (error === undefined) return undefined
  return {
    _tag: "Exit",
    requestId,
    exit: operation.encodeExit(Exit.fail(Grants.renamed(error, payload.id)))
  }
}
