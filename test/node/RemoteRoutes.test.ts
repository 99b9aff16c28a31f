// A remote client's routes to owner threads, against a host and an owner played by hand on the protocol's channels
// (no host layer runs in this file's process): when a request goes straight to the owner's channel, when it goes to
// the host, and what the host's `WorkerEnded` and `Unrouted` do to the requests and routes a remote holds.
import { assert, describe, it } from "@effect/vitest"
import { UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { BroadcastChannel } from "node:worker_threads"
import * as Remote from "../../packages/node/src/internal/thread/client.js"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"

const workerId = "mcpw_AAAAAAAAAAAAAAAAAAAAAA"

/**
 * A host and an owner thread by hand. The host acknowledges what asks for it, gives the route with every request it
 * answers (`route`), and answers with an empty result; the owner only keeps what reaches its channel.
 */
const handPlayed = Effect.acquireRelease(
  Effect.sync(() => {
    const host = new BroadcastChannel(Protocol.hostChannel)
    const owner = new BroadcastChannel(Protocol.ownerChannel(workerId))
    const atHost: Array<any> = []
    const atOwner: Array<any> = []
    const replies = new Map<string, BroadcastChannel>()
    const replyTo = (from: string, message: unknown) => {
      let channel = replies.get(from)
      if (channel === undefined) {
        channel = new BroadcastChannel(from)
        replies.set(from, channel)
      }
      channel.postMessage(Protocol.encodeReply(message as Protocol.Reply))
    }
    const state = { route: true }
    host.onmessage = (event) => {
      const message = (event as MessageEvent).data
      atHost.push(message)
      if (message._tag === "Ping") return replyTo(message.from, { _tag: "Ack", hostId: "hand" })
      if (message._tag !== "RemoteRequest") return
      if (message.ackBy !== undefined) replyTo(message.from, { _tag: "Ack", hostId: "hand", callId: message.callId })
      if (state.route) {
        replyTo(message.from, {
          _tag: "Route",
          workerId,
          channel: Protocol.ownerChannel(workerId),
          timeoutMs: 60_000
        })
      }
      replyTo(message.from, { _tag: "RemoteSuccess", callId: message.callId, value: {} })
    }
    owner.onmessage = (event) => atOwner.push((event as MessageEvent).data)
    return { host, owner, replies, atHost, atOwner, replyTo, state }
  }),
  (played) =>
    Effect.sync(() => {
      played.host.close()
      played.owner.close()
      for (const channel of played.replies.values()) channel.close()
    })
)

/** Waits until `check` holds, polling. */
const until = (check: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200 && !check(); i++) yield* Effect.sleep(5)
    assert.isTrue(check())
  })

describe("a remote's routes to owner threads", () => {
  it.scopedLive("the first request goes to the host, which gives the route; the next go straight to the owner", () =>
    Effect.gen(function* () {
      const played = yield* handPlayed
      const remote = yield* Remote.make
      yield* remote.ping(workerId)
      assert.strictEqual(played.atHost.filter((message) => message._tag === "RemoteRequest").length, 1)
      const direct = yield* Effect.fork(remote.callTool(workerId, "echo", { token: "straight" }))
      yield* until(() => played.atOwner.length === 1)
      const [request] = played.atOwner
      assert.deepInclude(request, { _tag: "Direct", method: "tools/call", callId: 2 })
      assert.deepStrictEqual(JSON.parse(request.params), { name: "echo", arguments: { token: "straight" } })
      // The worker's default budget travels as the deadline of a call that names none.
      assert.approximately(request.deadline, Date.now() + 60_000, 1_000)
      // A call with progress goes to the host all the same (C29).
      const withProgress = yield* Effect.fork(remote.callTool(workerId, "slow", {}, { onProgress: () => {} }))
      yield* Fiber.join(withProgress)
      assert.strictEqual(played.atHost.filter((message) => message._tag === "RemoteRequest").length, 2)
      assert.strictEqual(played.atOwner.length, 1)
      yield* Fiber.interrupt(direct)
      // The interruption follows its request to the owner's channel.
      yield* until(() => played.atOwner.length === 2)
      assert.deepInclude(played.atOwner[1], { _tag: "Interrupt", callId: 2, reply: false })
    })
  )

  it.scopedLive(
    "C22a: WorkerEnded: a request still waiting on the owner may have been taken: WorkerFailed, unknown; route dropped",
    () =>
      Effect.gen(function* () {
        const played = yield* handPlayed
        const remote = yield* Remote.make
        yield* remote.ping(workerId)
        const waiting = yield* Effect.fork(Effect.flip(remote.callTool(workerId, "echo", { token: "lost" })))
        yield* until(() => played.atOwner.length === 1)
        played.replyTo(request(played).from, {
          _tag: "WorkerEnded",
          workerId,
          error: new UnknownWorker({ workerId })
        })
        const error = yield* Fiber.join(waiting)
        assert.deepInclude(error, { _tag: "WorkerFailed", workerId, kind: "closing", delivery: "unknown" })
        // The next request goes to the host again.
        played.state.route = false
        yield* remote.ping(workerId)
        assert.strictEqual(played.atHost.filter((message) => message._tag === "RemoteRequest").length, 2)
        assert.strictEqual(played.atOwner.length, 1)
      })
  )

  it.scopedLive("Unrouted drops the route; a host not heard from lately gets the request, with its ackBy (C22a)", () =>
    Effect.gen(function* () {
      const played = yield* handPlayed
      const remote = yield* Remote.make
      yield* remote.ping(workerId)
      played.state.route = false
      played.replyTo(request(played).from, { _tag: "Unrouted", workerId })
      yield* Effect.sleep(20)
      yield* remote.ping(workerId)
      assert.strictEqual(played.atOwner.length, 0)
      assert.strictEqual(played.atHost.filter((message) => message._tag === "RemoteRequest").length, 2)
      // Routed again, but silent for longer than a remote trusts: the request goes to the host and asks for an `Ack`.
      played.state.route = true
      yield* remote.ping(workerId)
      yield* Effect.sleep(Protocol.staleAfterMs + 100)
      yield* remote.ping(workerId)
      const requests = played.atHost.filter((message) => message._tag === "RemoteRequest")
      assert.strictEqual(requests.length, 4)
      assert.isNumber(requests[3].ackBy)
      assert.strictEqual(played.atOwner.length, 0)
    })
  )
})

/** The remote's reply channel, read off the first request it sent the host. */
const request = (played: { readonly atHost: ReadonlyArray<any> }) =>
  played.atHost.find((message) => message._tag === "RemoteRequest") as { readonly from: string }
