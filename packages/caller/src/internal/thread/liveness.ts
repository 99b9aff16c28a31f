/**
 * How a thread caller knows the host is there, at no cost on the hot path. A request asks the host to acknowledge it
 * only when the host was not heard from lately (`ackBy`); each call's own timer then proves it unsent when no `Ack`
 * came by that time (C22a), and gives it up shortly after its deadline should nobody answer (C9). While calls are in
 * flight, one keep-alive timer pings the host (and the owner threads of direct calls) whenever nothing was posted for
 * `pingEveryMs`, which tells them this thread still waits, and turns a host that stops acknowledging into
 * `DeliveryUnknown` for the calls it may have sent (C22).
 *
 * @internal
 */
import { DeliveryUnknown, HostUnavailable } from "../../McpWorkerError.js"
import { afterPendingMessages, timerAt } from "./channel.js"
import * as Protocol from "./protocol.js"
import { failAll, interrupt, post, settle, type ThreadClient, type Waiting } from "./record.js"
import { postOn } from "./channel.js"

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
const hostUnresponsive = (operation: Protocol.Operation) =>
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

const workerIdOf = (operation: Protocol.Operation): string =>
  operation._tag === "RemoteOpen" ? "" : operation.workerId

/** When the call's own timer must look next: its `ackBy` until it is acknowledged, then its `giveUpAt`. */
const nextOf = (call: Waiting): number | undefined =>
  call.ackBy !== undefined && !call.acked ? call.ackBy : call.giveUpAt

/**
 * Arms the call's own timer, if it has anything to wait for. The check runs after the messages that arrived
 * meanwhile were read, so an answer or an `Ack` already here is not taken for silence.
 *
 * @internal
 */
export const armCall = (client: ThreadClient, callId: number, call: Waiting): void => {
  const at = nextOf(call)
  call.timer = at === undefined ? undefined : timerAt(at, () => afterPendingMessages(() => checkCall(client, callId)))
}

const checkCall = (client: ThreadClient, callId: number): void => {
  const call = client.pending.get(callId)
  if (call === undefined) return
  const now = Date.now()
  // No `Ack` by `ackBy`, and every message that arrived meanwhile has been read: no host took it (C22a).
  if (call.ackBy !== undefined && !call.acked && now > call.ackBy) {
    return settle(client, callId, { ok: false, error: noHost() })
  }
  if (call.giveUpAt !== undefined && now >= call.giveUpAt) {
    // Past its deadline and its grace with no answer: the request may have reached the server, and whoever runs it
    // is told to cancel it. Its request id was never sent here.
    interrupt(client, callId, false, call)
    return settle(client, callId, {
      ok: false,
      error: new DeliveryUnknown({
        workerId: workerIdOf(call.operation),
        requestId: "",
        reason: "timeout",
        delivery: "unknown"
      })
    })
  }
  armCall(client, callId, call)
}

/** When the keep-alive timer must look next: the probe's verdict, the next ping. */
const nextCheck = (client: ThreadClient): number => {
  let at = client.probe !== undefined ? client.probe.sentAt + client.probe.withinMs : Number.POSITIVE_INFINITY
  if (client.pending.size > 0) at = Math.min(at, client.lastSent + Protocol.pingEveryMs)
  return at
}

/**
 * Arms the keep-alive timer for the next check the caller needs; re-armed only when an earlier check is needed, so
 * a steady stream of calls arms it about once per `pingEveryMs`.
 *
 * @internal
 */
export const armKeepAlive = (client: ThreadClient): void => {
  const at = nextCheck(client)
  if (at === Number.POSITIVE_INFINITY || (client.keepAlive !== undefined && client.keepAlive.at <= at)) return
  if (client.keepAlive !== undefined) clearTimeout(client.keepAlive.handle)
  const handle = timerAt(at, () => {
    client.keepAlive = undefined
    afterPendingMessages(() => checkHost(client))
  })
  client.keepAlive = { handle, at }
}

const directChannels = (client: ThreadClient): Set<string> => {
  const channels = new Set<string>()
  for (const call of client.pending.values()) if (call.channel !== undefined) channels.add(call.channel)
  return channels
}

const checkHost = (client: ThreadClient): void => {
  const now = Date.now()
  const probe = client.probe
  if (probe !== undefined && now - probe.sentAt >= probe.withinMs) {
    client.probe = undefined
    // The host fell silent with these calls in flight: each may have been sent before it did. A call still waiting
    // for its own `Ack` is left to its `ackBy`, which proves it either way.
    failAll(client, hostUnresponsive, (call) => call.ackBy === undefined || call.acked)
  }
  if (client.pending.size > 0 && now - client.lastSent >= Protocol.pingEveryMs) {
    post(client, { _tag: "Ping", from: client.from })
    // An owner thread running a request of this caller's, straight from it, goes by this caller's word too.
    for (const channel of directChannels(client)) postOn(channel, { _tag: "Ping", from: client.from })
    // A probe already out keeps its own deadline: pings must not postpone the verdict on a host that is gone.
    if (client.probe === undefined) client.probe = { sentAt: now, withinMs: Protocol.pingAckWithinMs }
  }
  armKeepAlive(client)
}

/** Stops the keep-alive timer (the caller is disposed). @internal */
export const stopKeepAlive = (client: ThreadClient): void => {
  if (client.keepAlive !== undefined) clearTimeout(client.keepAlive.handle)
  client.keepAlive = undefined
}
