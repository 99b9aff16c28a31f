/**
 * A request the host would refuse now is answered in the step that reads its frame (C86): its payload is checked, the
 * listener admits it (`Access.admitted`), and the host says from its own record of the worker whether it would take
 * it (`HostRegistry.refused`: busy, closing, gone). A refusal is encoded through the operation's own exit schema and
 * written, with no fiber of the server and nothing kept; anything else goes on to the server, which begins it.
 *
 * @internal
 */
import * as Rpc from "@effect/rpc/Rpc"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { HostRegistry } from "../host/layer.js"
import * as Access from "./access.js"
import type * as Grants from "./grants.js"
import { ListenRpcs, RequestPayload, streamedTag } from "./rpcs.js"

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
  const found = Access.admitted(listener, operation.name, payload)
  const error = Either.isLeft(found)
    ? found.left
    : listener.registry.refused(found.right.workerId, operation.method, "socket")
  if (error === undefined) return undefined
  return {
    _tag: "Exit",
    requestId,
    exit: operation.encodeExit(Exit.fail(Access.renamed(error, payload.id)))
  }
}
