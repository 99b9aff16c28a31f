/**
 * The owner thread's end of the direct path: its listener, replies, hooks, counts, and the in-flight slot it writes
 * and the host reads (C8). The host's declarations name the slot, so this module's declarations name no Node type
 * (C98).
 *
 * @internal
 */
import type * as OwnerDirect from "@mcp-worker/core/internal/owner/owner"
import type { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Either from "effect/Either"
import { BroadcastChannel } from "node:worker_threads"
import * as RemoteProtocol from "./protocol.js"
import type { OwnerSpans } from "../owner/spans.js"

// [sequence, length] Int32, `since` Float64, then the id's bytes.
const headerBytes = 16
const maxIdBytes = 64

/** @internal */
export type Slot = SharedArrayBuffer

/** @internal */
export const makeSlot = (): Slot => new SharedArrayBuffer(headerBytes + maxIdBytes)

/** @internal */
export interface Held {
  readonly requestId: string
  readonly since: number
}

/**
 * Odd sequence during a write: a reader in another thread sees a whole write or retries.
 *
 * @internal
 */
export const slotWriter = (slot: Slot) => {
  const header = new Int32Array(slot, 0, 2)
  const since = new Float64Array(slot, 8, 1)
  const bytes = new Uint8Array(slot, headerBytes, maxIdBytes)
  return {
    set: (requestId: string): void => {
      Atomics.add(header, 0, 1)
      const { written } = new TextEncoder().encodeInto(requestId.slice(0, maxIdBytes), bytes)
      since[0] = Date.now()
      Atomics.store(header, 1, written)
      Atomics.add(header, 0, 1)
    },
    clear: (): void => {
      Atomics.add(header, 0, 1)
      Atomics.store(header, 1, 0)
      Atomics.add(header, 0, 1)
    }
  }
}

const decoder = new TextDecoder()

/** @internal */
export const readSlot = (slot: Slot): Held | undefined => {
  const header = new Int32Array(slot, 0, 2)
  // An owner that died mid-write had nothing in flight.
  for (let tries = 0; tries < 10_000; tries++) {
    const before = Atomics.load(header, 0)
    if ((before & 1) === 1) continue
    const length = Atomics.load(header, 1)
    const held =
      length === 0
        ? undefined
        : {
            requestId: decoder.decode(new Uint8Array(slot, headerBytes, length).slice()),
            since: new Float64Array(slot, 8, 1)[0]!
          }
    if (Atomics.load(header, 0) === before) return held
  }
  return undefined
}

const maxReplyChannels = 16

/** @internal */
export const makeReplies = () => {
  const channels = RemoteProtocol.makeReplyChannels(maxReplyChannels)
  const post = (replyTo: OwnerProtocol.ReplyTo, result: string, envelope: boolean) => {
    const message: RemoteProtocol.Result = { _tag: "Result", callId: replyTo.callId, result, envelope }
    channels.get(replyTo.channel, replyTo.thread).postMessage(message)
  }
  const fail = (replyTo: OwnerProtocol.ReplyTo, error: McpWorkerError) =>
    channels
      .get(replyTo.channel, replyTo.thread)
      .postMessage(RemoteProtocol.encodeReply({ _tag: "RemoteFailure", callId: replyTo.callId, error }))
  const defect = (channel: string, callId: number, message: string) =>
    channels.get(channel).postMessage({ _tag: "Defect", callId, message })
  return { post, fail, defect, close: channels.close }
}

/** @internal */
export type Replies = ReturnType<typeof makeReplies>

/** @internal */
export const listen = (
  workerId: string,
  owner: OwnerDirect.DirectOwner,
  replies: Replies,
  spans: OwnerSpans | undefined
): (() => void) => {
  const channel = new BroadcastChannel(RemoteProtocol.ownerChannel(workerId))
  channel.unref()
  channel.onmessage = (event) => {
    const decoded = RemoteProtocol.decodeOwnerChannelMessage((event as MessageEvent).data)
    if (Either.isRight(decoded)) {
      const message = decoded.right
      if (message._tag === "Ping") return owner.heard(message.from)
      if (message._tag !== "Direct") return owner.interruptDirect(message.from, message.callId)
      return spans === undefined || message.trace === undefined
        ? owner.startDirect(message)
        : spans.direct(message.trace, () => owner.startDirect(message))
    }
    const raw = (event as MessageEvent).data as { from?: unknown; callId?: unknown } | null
    if (typeof raw?.from === "string" && typeof raw.callId === "number") {
      replies.defect(
        raw.from,
        raw.callId,
        "the mcp-worker owner thread could not read the request (another version of mcp-worker?)"
      )
    }
  }
  return () => channel.close()
}

type ObservedRequest = (typeof OwnerProtocol.ObservedMessage.Type)["requests"][number]

const observeEveryMs = 250

/** C80 @internal */
export const makeObserved = (post: (message: OwnerProtocol.OwnerMessageEncoded) => void) => {
  let batch: Array<ObservedRequest> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (batch.length === 0) return
    const requests = batch
    batch = []
    post({ _tag: "Observed", requests })
  }
  const observe: NonNullable<OwnerDirect.DirectPort["observe"]> = (method, outcome, delivery, seconds, spilled) => {
    batch.push({
      method,
      outcome: outcome as ObservedRequest["outcome"],
      delivery,
      ...(seconds === undefined ? {} : { seconds }),
      ...(spilled === undefined ? {} : { spilled })
    })
    if (timer === undefined) {
      timer = setTimeout(flush, observeEveryMs)
      timer.unref()
    }
  }
  return { observe, flush }
}

/** @internal */
export const directPort = (
  slot: Slot,
  post: (message: OwnerProtocol.OwnerMessageEncoded) => void,
  spans: OwnerSpans | undefined
) => {
  const replies = makeReplies()
  const held = slotWriter(slot)
  const observed = makeObserved(post)
  const hooks: Omit<OwnerDirect.DirectHooks, "spanOf"> = {
    postDirect: (replyTo, result, envelope, requestId) => {
      spans?.answered(requestId, undefined)
      replies.post(replyTo, result, envelope)
    },
    postDirectFailure: (replyTo, error, requestId) => {
      spans?.answered(requestId, error)
      replies.fail(replyTo, error)
    },
    taken: (requestId, method) => {
      held.set(requestId)
      spans?.taken(requestId, method)
    },
    released: held.clear,
    observe: observed.observe,
    flush: observed.flush
  }
  return { hooks, replies, observed }
}
