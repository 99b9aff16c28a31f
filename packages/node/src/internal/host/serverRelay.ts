/**
 * The requests of the operation table that remote threads send: relayed in the very step that reads them, without a
 * fiber, or adopted once the owner thread took them straight from their remote (`Started`). Either way the host
 * tracks, times and answers them as its own.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { Entry } from "./entry.js"
import type { HostRegistry } from "./layer.js"
import type { RemoteRoutes } from "./registry.js"
import * as HostRequest from "./request.js"
import * as Protocol from "../wire/remoteProtocol.js"
import { startSpan } from "../shared/traced.js"
import { ended, finish, remaining, reply, type ServedCall, type ServerState, track } from "./serverCalls.js"

/**
 * How the owner thread may answer a remote's call itself: only a remote that reads `Result`s, and never a call with
 * progress (progress travels through here, and the success must not overtake it, C29).
 */
const directOf = (
  server: ServerState,
  message: typeof Protocol.RemoteRequest.Type,
  operation: typeof Protocol.RemoteCall.Type
): HostRequest.DirectCaller | undefined =>
  operation.direct === true && operation.progress !== true
    ? {
        replyTo: { channel: message.from, callId: message.callId },
        onRoute: (route) => {
          const { workerId } = operation
          reply(server, message.from, { _tag: "Route", workerId, channel: route.channel, timeoutMs: route.timeoutMs })
          if (route.evicted !== undefined) reply(server, route.evicted, { _tag: "Unrouted", workerId })
        }
      }
    : undefined

/**
 * This host's span of a remote caller's request, as the child of the caller's (`trace`), when the host is tracing too.
 * The owner's span is the caller's child as well: the host is not on the way of a direct request (`direct`).
 */
const traceCall = (
  server: ServerState,
  call: ServedCall,
  trace: OwnerProtocol.TraceContext,
  operation: typeof Protocol.RemoteCall.Type,
  direct: boolean
) => {
  if (server.tracing === undefined) return
  call.span = startSpan(server.tracing, "HostServer.request", trace, {
    workerId: operation.workerId,
    method: operation.method,
    direct
  })
}

/**
 * The host server's part in the requests remote callers send owner threads directly: such a request, once its owner
 * took it, is tracked and answered as a relayed one (its success excepted, which the owner posted itself); a worker's
 * end is announced to the remotes given its route, after those answers (they share the remote's reply channel).
 *
 * @internal
 */
export const routes = (server: ServerState): RemoteRoutes => ({
  adopt: (entry: Entry, started) => {
    const operation: typeof Protocol.RemoteCall.Type = {
      _tag: "RemoteCall",
      workerId: entry.workerId,
      method: started.method,
      params: "",
      deadline: started.deadline
    }
    const call = track(server, started.replyTo.channel, started.replyTo.callId, operation)
    if (call === undefined) return
    if (started.trace !== undefined) traceCall(server, call, started.trace, operation, true)
    const sent = HostRequest.adopt(entry, started, ended(server, call))
    if (server.calls.has(call.key)) call.sent = sent
  },
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
  if (message.trace !== undefined) traceCall(server, call, message.trace, operation, false)
  // Checked in the calling thread; read here only to be sure the owner gets an object's JSON text.
  const params = JsonValue.decode(operation.params, { where: "arguments", root: "params" })
  if (Either.isLeft(params)) return finish(server, call, Exit.fail(params.left))
  if (!JsonValue.isJsonObject(params.right)) {
    return finish(
      server,
      call,
      Exit.fail(Protocol.invalidArguments("params", "the request params must be a plain object"))
    )
  }
  const onProgress =
    operation.progress === true
      ? (progress: OwnerProtocol.Progress) =>
          reply(server, message.from, { _tag: "RemoteProgress", callId: message.callId, progress })
      : undefined
  try {
    const sent = active.begin(
      operation.workerId,
      operation.method,
      operation.params,
      remaining(operation.deadline),
      onProgress,
      operation.saveTo,
      operation.spill,
      directOf(server, message, operation),
      message.trace,
      ended(server, call)
    )
    if (server.calls.has(call.key)) call.sent = sent
  } catch (error) {
    finish(server, call, Exit.die(error))
  }
}
