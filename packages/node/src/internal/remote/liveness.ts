/**
 * How a remote knows the host is there, at no cost on the hot path: it asks the host to acknowledge a request only
 * when it has not heard from a host lately, and only then arms the no-answer check that turns a missing host into
 * `HostUnavailable` (C22, C22a). While calls are in flight it pings the host whenever it has posted nothing for
 * `pingEveryMs` (and the owner threads its direct requests went to), which tells them that this thread is still
 * waiting, and checks that the host still
 * acknowledges. A request with a budget also carries its deadline, and is given up here, without the host, shortly
 * after it (C9). All of it runs on one timer per client.
 *
 * @internal
 */
import { DeliveryUnknown, HostUnavailable, type McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Exit from "effect/Exit"
import * as Protocol from "../wire/remoteProtocol.js"
import { failAll, interrupt, post, postOn, type RemoteClient, settle, type WaitingCall } from "./record.js"

/** A request no host acknowledged by its `ackBy`: proven never sent, since a host reading it later refuses it. */
const noHost = () =>
  new HostUnavailable({
    message:
      `no mcp-worker host acknowledged the request within ${Protocol.ackWithinMs} ms, so it was not sent (and a ` +
      "host that reads it later refuses it): build NodeMcpWorkers.layer() in some thread of this process (normally " +
      "the main thread) before using NodeMcpWorkers.layerRemote or makePromiseClient; if one runs, its event loop " +
      "was blocked"
  })

/** A request the host may have sent before it fell silent. */
const hostUnresponsive = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "RemoteOpen"
    ? new HostUnavailable({
        message:
          "the mcp-worker host stopped answering while it opened the worker; if it comes back, the open is " +
          "interrupted and nothing of it is left"
      })
    : new DeliveryUnknown({
        workerId: operation.workerId,
        requestId: "",
        reason: "host_unresponsive",
        delivery: "unknown"
      })

/**
 * Past its deadline and its grace, with no answer: the host is blocked or lost the call. The request may have
 * reached the server, and the host is told to cancel it. Its request id was never sent here.
 */
const giveUp = (client: RemoteClient, callId: number, call: WaitingCall) => {
  interrupt(client, callId, false)
  const workerId = call.operation._tag === "RemoteOpen" ? "" : call.operation.workerId
  settle(
    client,
    callId,
    Exit.fail(new DeliveryUnknown({ workerId, requestId: "", reason: "timeout", delivery: "unknown" }))
  )
}

/** When the timer must look next: the probe's deadline, the next keep-alive ping, a call's own deadlines. */
const nextCheck = (client: RemoteClient): number => {
  let at = client.probe !== undefined ? client.probe.sentAt + client.probe.withinMs : Number.POSITIVE_INFINITY
  if (client.pending.size === 0) return at
  at = Math.min(at, client.lastSent + Protocol.pingEveryMs)
  for (const call of client.pending.values()) {
    if (call.giveUpAt !== undefined && call.giveUpAt < at) at = call.giveUpAt
    if (call.ackBy !== undefined && !call.acked && call.ackBy < at) at = call.ackBy
  }
  return at
}

/**
 * Arms the one timer for the next check the client needs. At most one timer, re-armed only when an earlier check is
 * needed: a steady stream of calls arms it about once per `pingEveryMs`, not once per call.
 *
 * @internal
 */
export const arm = (client: RemoteClient) => {
  const at = nextCheck(client)
  if (at === Number.POSITIVE_INFINITY || (client.timer !== undefined && client.timer.at <= at)) return
  if (client.timer !== undefined) clearTimeout(client.timer.handle)
  // After this thread's event loop was blocked, timers run before the messages that arrived meanwhile are read:
  // the check waits for them (`setImmediate` runs after that turn's I/O), so that an answer or an `Ack` already
  // here is not taken for silence.
  const onTimer = () => {
    client.timer = undefined
    setImmediate(() => check(client))
  }
  // A timer holds at most 2^31 - 1 ms (longer ones fire at once); a later check re-arms it.
  const handle = setTimeout(onTimer, Math.min(Math.max(0, at - Date.now()) + 1, ServerConfig.maxTimeoutMs))
  handle.unref()
  client.timer = { handle, at }
}

const directChannels = (client: RemoteClient): Set<string> => {
  const channels = new Set<string>()
  for (const call of client.pending.values()) if (call.channel !== undefined) channels.add(call.channel)
  return channels
}

const check = (client: RemoteClient) => {
  const now = Date.now()
  for (const [callId, call] of Array.from(client.pending.entries())) {
    // No `Ack` by `ackBy`, and every message that arrived meanwhile has been read (see `arm`): no host took it.
    if (call.ackBy !== undefined && !call.acked && now > call.ackBy) settle(client, callId, Exit.fail(noHost()))
    else if (call.giveUpAt !== undefined && now >= call.giveUpAt) giveUp(client, callId, call)
  }
  const probe = client.probe
  if (probe !== undefined && now - probe.sentAt >= probe.withinMs) {
    client.probe = undefined
    // The host fell silent with these calls in flight: each may have been sent before it did. A call still waiting
    // for its own `Ack` is left to its `ackBy`, which proves it either way.
    failAll(client, hostUnresponsive, (call) => call.ackBy === undefined || call.acked)
  }
  if (client.pending.size > 0 && now - client.lastSent >= Protocol.pingEveryMs) {
    post(client, { _tag: "Ping", from: client.from })
    // An owner thread running a request of this client's, straight from it, goes by this client's word too.
    for (const channel of directChannels(client)) postOn(channel, { _tag: "Ping", from: client.from })
    // A probe already out keeps its own deadline: pings must not postpone the verdict on a host that is gone.
    if (client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.pingAckWithinMs }
  }
  arm(client)
}
