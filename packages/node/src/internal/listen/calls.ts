/**
 * The requests a listener began for socket calls, by connection and rpc request id. `RpcServer` interrupts a
 * handler's fiber as a fork, so the peer's next request could begin before the interrupted one's finalizer freed the
 * worker; the listener ends an interrupted call's request here instead, in the step that reads its `Interrupt` frame.
 *
 * @internal
 */
import type * as Headers from "@effect/platform/Headers"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import type * as HostRequest from "../host/request.js"

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
