/**
 * The requests of the operation table that remote threads send the host: relayed in the very step that reads them,
 * without a fiber. Those a remote sends an owner thread straight (on the route given here) never reach the host.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { HostRegistry } from "./layer.js"
import type { RemoteRoutes } from "./registry.js"
import * as HostRequest from "./request.js"
import * as Protocol from "../wire/remoteProtocol.js"
import { startSpan } from "../shared/traced.js"
import { ended, finish, remaining, reply, type ServedCall, type ServerState } from "./serverCalls.js"

/**
 * The remote that may be given the worker's route with this request: only one that reads the owner's own answers, and
 * never for a call with progress (progress travels through the host, C29).
 */
const remoteOf = (
  server: ServerState,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
): HostRequest.RemoteCaller | undefined =>
  operation.direct === true && operation.progress !== true
    ? {
        channel: message.from,
        onRoute: (route) => {
          const { workerId } = operation
          const { channel, timeoutMs } = route
          // C83: a host that traces keeps the untraced calls it would root on its own path.
          const traced = server.tracing === undefined ? {} : { traced: true }
          reply(server, message.from, { _tag: "Route", workerId, channel, timeoutMs, ...traced })
          if (route.evicted !== undefined) reply(server, route.evicted, { _tag: "Unrouted", workerId })
        }
      }
    : undefined

/**
 * This host's span of a remote caller's request when the host traces, the child of the caller's (`trace`) or, for an
 * untraced caller, a root of the host's trace; the trace the owner is given (C83). Else the caller's, as it came.
 */
const traceCall = (
  server: ServerState,
  call: ServedCall,
  trace: OwnerProtocol.TraceContext | undefined,
  operation: typeof Protocol.RemoteCall.Type
): OwnerProtocol.TraceContext | undefined => {
  if (server.tracing === undefined) return trace
  call.span = startSpan(server.tracing, "HostServer.request", trace, {
    workerId: operation.workerId,
    method: operation.method,
    direct: false
  })
  return OwnerProtocol.traceContextOf(call.span)
}

/**
 * The host server's part in the requests remote callers send owner threads directly: a worker's end is announced to
 * the remotes given its route.
 *
 * @internal
 */
export const routes = (server: ServerState): RemoteRoutes => ({
  answer: (replyTo, error) => reply(server, replyTo.channel, { _tag: "RemoteFailure", callId: replyTo.callId, error }),
  ended: (workerId, remotes, error) => {
    for (const to of remotes) reply(server, to, { _tag: "WorkerEnded", workerId, error })
  }
})

/**
 * Runs a remote thread's request in this very step, without a fiber: the host's own work on every remote call is a
 * check of the params, the registry's busy check and one post to the owner. The request's own completion answers
 * it; when the host closes, the registry's close of each worker ends the request in flight, which answers it too.
 *
 * @internal
 */
export const runRequest = (
  server: ServerState,
  active: HostRegistry,
  call: ServedCall,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
) => {
  const trace = traceCall(server, call, message.trace, operation)
  // Checked in the calling thread; read here only to be sure the owner gets an object's JSON text.
  const params = JsonValue.decode(operation.params, { where: "arguments", root: "params" })
  const invalid = Either.isLeft(params)
    ? params.left
    : JsonValue.isJsonObject(params.right)
      ? undefined
      : Protocol.invalidArguments("params", "the request params must be a plain object")
  if (invalid !== undefined) {
    const counted = active.refusedBefore(operation.workerId, operation.method, "thread", invalid)
    return finish(server, call, Exit.fail(counted))
  }
  const onProgress =
    operation.progress === true
      ? (progress: OwnerProtocol.Progress) =>
          reply(server, message.from, { _tag: "RemoteProgress", callId: message.callId, progress })
      : undefined
  try {
    const sent = active.begin(
      {
        id: operation.workerId,
        method: operation.method,
        params: operation.params,
        budgetMs: remaining(operation.deadline),
        idleMs: operation.idleMs,
        onProgress,
        saveTo: operation.saveTo,
        spill: operation.spill,
        remote: remoteOf(server, message, operation),
        trace,
        surface: "thread"
      },
      ended(server, call)
    )
    if (server.calls.has(call.key)) call.sent = sent
  } catch (error) {
    finish(server, call, Exit.die(error))
  }
}
