/**
 * What a remote client receives: the replies on its own channel (from the host, and a success straight from an owner
 * thread), and the hosts' announcements.
 *
 * @internal
 */
import { WorkerFailed } from "@mcp-worker/core/McpWorkerError"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as RemoteCodec from "../wire/remoteCodec.js"
import * as Protocol from "../wire/remoteProtocol.js"
import { failAll, heard, type RemoteClient, settle } from "./record.js"

const resultOf = (response: unknown): unknown =>
  Predicate.hasProperty(response, "result") ? response.result : undefined

/**
 * A success straight from the owner thread. It says nothing of the host, whose liveness this client tracks, so it
 * is not taken as word from it; nor does an owner's failure, which arrives as a `RemoteFailure` on this channel too.
 */
const onResult = (client: RemoteClient, reply: Protocol.Result) => {
  const call = client.pending.get(reply.callId)
  if (call === undefined || call.operation._tag !== "RemoteCall") return
  let value: unknown
  try {
    value = JSON.parse(reply.result)
  } catch {
    return settle(client, reply.callId, Exit.die(new Error("the owner's answer could not be read")))
  }
  // The envelope is the server's response line: its `result` is the call's.
  settle(client, reply.callId, Exit.succeed(reply.envelope ? resultOf(value) : value))
}

/**
 * The worker's owner has ended. The owner answers what it took before it ends, but on its own way here: a direct
 * request still waiting may have been taken, so it is answered unknown, never as not sent (C22a).
 */
const onWorkerEnded = (client: RemoteClient, reply: typeof Protocol.WorkerEnded.Type) => {
  const route = client.routes.get(reply.workerId)
  if (route === undefined) return
  client.routes.delete(reply.workerId)
  const { error } = reply
  const ended = new WorkerFailed({
    workerId: reply.workerId,
    kind: error._tag === "WorkerFailed" ? error.kind : "closing",
    message: error._tag === "WorkerFailed" ? error.message : "the worker closed while the request was in flight",
    delivery: "unknown"
  })
  for (const [callId, call] of Array.from(client.pending.entries())) {
    if (call.channel === route.channel) settle(client, callId, Exit.fail(ended))
  }
}

/** A message on the client's reply channel. @internal */
export const onReply = (client: RemoteClient, data: unknown) => {
  const decoded = RemoteCodec.decodeReply(data)
  if (Either.isLeft(decoded)) return
  if (decoded.right._tag === "Result") return onResult(client, decoded.right)
  heard(client)
  const reply = decoded.right
  switch (reply._tag) {
    case "Route":
      client.routes.set(reply.workerId, { channel: reply.channel, timeoutMs: reply.timeoutMs })
      return
    case "Unrouted":
      client.routes.delete(reply.workerId)
      return
    case "WorkerEnded":
      return onWorkerEnded(client, reply)
    case "Ack": {
      client.knownHost = reply.hostId
      client.hostGone = false
      const call = reply.callId === undefined ? undefined : client.pending.get(reply.callId)
      if (call !== undefined) call.acked = true
      return
    }
    case "RemoteSuccess":
      return settle(client, reply.callId, Exit.succeed(reply.value))
    case "RemoteFailure":
      return settle(client, reply.callId, Exit.fail(reply.error))
    case "Defect":
      return settle(client, reply.callId, Exit.die(new Error(reply.message)))
    case "RemoteProgress": {
      const onProgress = client.pending.get(reply.callId)?.onProgress
      if (onProgress === undefined) return
      // The caller's own code: what it throws must not reach this channel's message handling.
      try {
        onProgress(reply.progress)
      } catch {
        return
      }
      return
    }
  }
}

/** A host's announcement: one started (`Up`), or ours closed (`Gone`). @internal */
export const onAnnouncement = (client: RemoteClient, data: unknown) => {
  const decoded = RemoteCodec.decodeAnnouncement(data)
  if (Either.isLeft(decoded)) return
  const announcement = decoded.right
  if (announcement._tag === "Up") {
    client.knownHost = announcement.hostId
    client.hostGone = false
    heard(client)
    return
  }
  // Another host's `Gone` (a second host in the process, on standby) says nothing about ours.
  if (client.knownHost !== undefined && announcement.hostId !== client.knownHost) return
  client.knownHost = undefined
  client.hostGone = true
  client.routes.clear()
  // The host answered every call it ran before announcing; those answers travel on the reply channel and are read
  // in this same turn of the event loop, so whatever is still pending after it was never going to be.
  setImmediate(() => {
    if (client.hostGone) failAll(client, Protocol.afterHostClosed)
  })
}
