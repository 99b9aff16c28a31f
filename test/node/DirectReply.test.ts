// A remote call's success straight from the owner thread (`OwnerProtocol.ReplyTo`): one thread hand-over instead of
// two on the way back. The host still decides busy (C8) and ends every request; these tests speak the remote
// protocol by hand, from this (the host's) thread, so that what the host and the owner post can be seen.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../../packages/node/src/internal/remoteProtocol.js"
import { statefulConfig } from "../fixtures/servers.js"

const withHost = <A, E>(effect: Effect.Effect<A, E, McpWorkers | Scope.Scope>) =>
  Effect.scoped(Effect.provide(effect, NodeMcpWorkers.layer()))

interface Reply {
  readonly _tag: string
  readonly callId?: number
  readonly [key: string]: unknown
}

/** A remote client by hand: its reply channel, every reply it got, and requests posted as a remote posts them. */
const rawRemote = Effect.acquireRelease(
  Effect.sync(() => {
    const from = Protocol.replyChannel(Protocol.randomId())
    const channel = new BroadcastChannel(from)
    const replies: Array<Reply> = []
    let onReply: (reply: Reply) => void = () => {}
    channel.onmessage = (event) => {
      replies.push((event as MessageEvent).data as Reply)
      onReply((event as MessageEvent).data as Reply)
    }
    const post = (callId: number, operation: Record<string, unknown>) => {
      const host = new BroadcastChannel(Protocol.hostChannel)
      host.postMessage({ _tag: "Request", from, callId, operation })
      host.close()
    }
    /** The answer to `callId` (an `Ack` is not one). */
    const answer = (callId: number) =>
      Effect.async<Reply>((resume) => {
        const found = replies.find((reply) => reply.callId === callId && reply._tag !== "Ack")
        if (found !== undefined) return resume(Effect.succeed(found))
        const previous = onReply
        onReply = (reply) => {
          previous(reply)
          if (reply.callId === callId && reply._tag !== "Ack") resume(Effect.succeed(reply))
        }
      }).pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`no answer to call ${callId}`) }),
        Effect.orDie
      )
    return {
      channel,
      replies,
      post,
      answer
    }
  }),
  (remote) => Effect.sync(() => remote.channel.close())
)

const echo = (workerId: string, token: string, extra: Record<string, unknown> = {}) => ({
  _tag: "Call",
  workerId,
  method: "tools/call",
  params: JSON.stringify({ name: "echo", arguments: { token } }),
  ...extra
})

const resultOf = (reply: Reply): any => {
  const parsed = JSON.parse(reply.result as string)
  return reply.envelope === true ? parsed.result : parsed
}

describe("direct replies from the owner thread", () => {
  it.live("a remote that reads Results gets the success from the owner; the host answers nothing for it", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const remote = yield* rawRemote
        remote.post(1, echo(id, "direct", { direct: true }))
        const answer = yield* remote.answer(1)
        assert.strictEqual(answer._tag, "Result")
        assert.strictEqual(resultOf(answer).structuredContent.token, "direct")
        // The host ends the request on the owner's `Delivered`, without a reply of its own.
        yield* Effect.sleep(100)
        assert.deepStrictEqual(
          remote.replies.map((reply) => reply._tag),
          ["Result"]
        )
        assert.isFalse((yield* workers.status(id)).busy)
        // A remote that does not say it reads them gets the host's `Success`, as before.
        remote.post(2, echo(id, "relayed"))
        const relayed = yield* remote.answer(2)
        assert.strictEqual(relayed._tag, "Success")
        assert.strictEqual((relayed.value as any).structuredContent.token, "relayed")
      })
    )
  )

  it.live("a success delivered while the host was blocked past the deadline is not then timed out by the host", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const remote = yield* rawRemote
        remote.post(1, {
          _tag: "Call",
          workerId: id,
          method: "tools/call",
          params: JSON.stringify({ name: "sleep", arguments: { ms: 50, token: "late-timer" } }),
          deadline: Date.now() + 400,
          direct: true
        })
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        // The owner answers the remote and tells the host `Delivered` while this thread (the host's) is blocked. When
        // it wakes, the request's timer runs before the port's messages are read: the request has ended all the same.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500)
        const answer = yield* remote.answer(1)
        assert.strictEqual(answer._tag, "Result")
        assert.strictEqual(resultOf(answer).structuredContent.token, "late-timer")
        yield* Effect.sleep(200)
        // No `DeliveryUnknown{timeout}` after the success.
        assert.deepStrictEqual(
          remote.replies.map((reply) => reply._tag),
          ["Result"]
        )
        assert.isFalse((yield* workers.status(id)).busy)
      })
    )
  )

  it.live("an owner process has no channel to other threads: its answers come through the host", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig(), { isolation: "process" })
        const remote = yield* rawRemote
        remote.post(1, echo(id, "process", { direct: true }))
        const answer = yield* remote.answer(1)
        assert.strictEqual(answer._tag, "Success")
        assert.strictEqual((answer.value as any).structuredContent.token, "process")
      })
    )
  )
})
