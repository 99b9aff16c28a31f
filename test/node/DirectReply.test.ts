// A remote call straight to and from the owner thread. A remote given the worker's `Route` (with its first request,
// relayed by the host) sends its next requests to the owner's channel: the owner decides busy and names the request
// (C8), runs its budget, cancels it exactly and answers the remote itself (C9–C12); the host only reads the owner's
// record of it for `status`, and asks the owner to `cancel` it. These tests speak the remote protocol by hand, from
// this (the host's) thread, so that what the host and the owner post can be seen.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers, type McpWorkersService } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"
import { statefulConfig } from "../fixtures/servers.js"
import { ownerThread, startedThreads } from "./helpers.js"

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
    const postOn = (name: string, message: unknown) => {
      const channel = new BroadcastChannel(name)
      channel.postMessage(message)
      channel.close()
    }
    const post = (callId: number, operation: Record<string, unknown>) =>
      postOn(Protocol.hostChannel, { _tag: "RemoteRequest", from, callId, operation })
    /** A request straight to the owner thread of `workerId`, as a remote with its route sends it. */
    const direct = (
      callId: number,
      workerId: string,
      params: Record<string, unknown>,
      deadline = Date.now() + 10_000
    ) =>
      postOn(Protocol.ownerChannel(workerId), {
        _tag: "Direct",
        from,
        callId,
        method: "tools/call",
        params: JSON.stringify(params),
        deadline
      })
    const interrupt = (callId: number, workerId: string) =>
      postOn(Protocol.ownerChannel(workerId), { _tag: "Interrupt", from, callId, reply: true })
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
    /** The replies that answer calls, in order: the host's `Route` and `WorkerEnded` are not answers. */
    const answers = () => replies.filter((reply) => reply.callId !== undefined && reply._tag !== "Ack")
    return {
      from,
      channel,
      replies,
      post,
      direct,
      interrupt,
      answer,
      answers
    }
  }),
  (remote) => Effect.sync(() => remote.channel.close())
)

/** A host with one worker of the stateful fixture, and a remote played by hand. */
const withWorker = <A, E>(
  body: (
    workers: McpWorkersService,
    id: string,
    remote: Effect.Effect.Success<typeof rawRemote>
  ) => Effect.Effect<A, E, McpWorkers | Scope.Scope>
) =>
  withHost(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig())
      return yield* body(workers, id, yield* rawRemote)
    })
  )

const echo = (workerId: string, token: string, extra: Record<string, unknown> = {}) => ({
  _tag: "RemoteCall",
  workerId,
  method: "tools/call",
  params: JSON.stringify({ name: "echo", arguments: { token } }),
  ...extra
})

const resultOf = (reply: Reply): any => {
  const parsed = JSON.parse(reply.result as string)
  return reply.envelope === true ? parsed.result : parsed
}

/** How many requests the server saw aborted, once it saw `atLeast` (the cancel notification races the next call). */
const abortedAtServer = (workers: McpWorkersService, id: string, atLeast: number) =>
  Effect.gen(function* () {
    let aborted = 0
    for (let i = 0; i < 50 && aborted < atLeast; i++) {
      if (i > 0) yield* Effect.sleep(20)
      const result = yield* Effect.orDie(workers.callTool(id, "cancelled", {}))
      aborted = (result.structuredContent as { aborted: Array<unknown> }).aborted.length
    }
    return aborted
  })

describe("direct replies from the owner thread", () => {
  it.live("the host relays a remote's first request and gives the route; the owner answers the next itself", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        remote.post(1, echo(id, "relayed", { direct: true }))
        const relayed = yield* remote.answer(1)
        assert.strictEqual(relayed._tag, "RemoteSuccess")
        assert.strictEqual((relayed.value as any).structuredContent.token, "relayed")
        assert.deepStrictEqual(remote.replies[0], {
          _tag: "Route",
          workerId: id,
          channel: Protocol.ownerChannel(id),
          timeoutMs: 30_000
        })
        remote.direct(2, id, { name: "echo", arguments: { token: "direct" } })
        const answer = yield* remote.answer(2)
        assert.strictEqual(answer._tag, "Result")
        assert.strictEqual(resultOf(answer).structuredContent.token, "direct")
        yield* Effect.sleep(100)
        assert.deepStrictEqual(
          remote.replies.map((reply) => reply._tag),
          ["Route", "RemoteSuccess", "Result"]
        )
        assert.isFalse((yield* workers.status(id)).busy)
        // A remote that does not say it reads the owner's answers is given no route.
        const other = yield* rawRemote
        other.post(1, echo(id, "plain"))
        assert.strictEqual((yield* other.answer(1))._tag, "RemoteSuccess")
        assert.deepStrictEqual(
          other.replies.map((reply) => reply._tag),
          ["RemoteSuccess"]
        )
      })
    )
  )

  it.live(
    "C9: a request on the owner's channel is timed and answered by the owner, while the host's loop is blocked",
    () =>
      withWorker((workers, id, remote) =>
        Effect.gen(function* () {
          remote.direct(1, id, { name: "sleep", arguments: { ms: 50, token: "blocked-host" } }, Date.now() + 400)
          // The host's loop blocked past the request's end and its deadline: the success alone answers it.
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
          const first = yield* remote.answer(1)
          assert.strictEqual(first._tag, "Result")
          assert.strictEqual(resultOf(first).structuredContent.token, "blocked-host")
          // A deadline passed while the host's loop is blocked: the owner ends the request and answers it all the same.
          remote.direct(2, id, { name: "sleep", arguments: { ms: 5_000 } }, Date.now() + 300)
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
          assert.deepInclude((yield* remote.answer(2)).error as object, {
            _tag: "DeliveryUnknown",
            reason: "timeout",
            delivery: "unknown"
          })
          yield* Effect.sleep(200)
          assert.deepStrictEqual(
            remote.answers().map((reply) => reply._tag),
            ["Result", "RemoteFailure"]
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
        assert.strictEqual(answer._tag, "RemoteSuccess")
        assert.strictEqual((answer.value as any).structuredContent.token, "process")
      })
    )
  )

  it.live(
    "C8, C12: a request on the owner's channel: the owner names it, status shows it, the owner refuses the rest",
    () =>
      withWorker((workers, id, remote) =>
        Effect.gen(function* () {
          // Held until every refusal below is seen, however slow the machine.
          const gate = path.join(mkdtempSync(path.join(tmpdir(), "mcpw-gate-")), "open")
          remote.direct(1, id, { name: "sleep", arguments: { ms: 30_000, token: "straight", untilFile: gate } })
          while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
          const status = yield* workers.status(id)
          assert.match(status.requestId!, /^req_[A-Za-z0-9_-]{16}$/)
          // The host's own request, and a second one on the owner's channel, are refused unsent, naming it.
          const busy = yield* Effect.flip(workers.callTool(id, "inc", {}))
          assert.deepInclude(busy as object, { _tag: "WorkerBusy", requestId: status.requestId, delivery: "not_sent" })
          remote.direct(2, id, { name: "inc", arguments: {} })
          const refused = yield* remote.answer(2)
          assert.strictEqual(refused._tag, "RemoteFailure")
          assert.deepInclude(refused.error as object, {
            _tag: "WorkerBusy",
            requestId: status.requestId,
            delivery: "not_sent"
          })
          writeFileSync(gate, "")
          const answer = yield* remote.answer(1)
          rmSync(path.dirname(gate), { recursive: true, force: true })
          assert.strictEqual(answer._tag, "Result")
          assert.strictEqual(resultOf(answer).structuredContent.token, "straight")
          yield* Effect.sleep(100)
          assert.deepStrictEqual(
            remote.replies.map((reply) => reply._tag),
            ["RemoteFailure", "Result"]
          )
          assert.isFalse((yield* workers.status(id)).busy)
          // Neither refused request reached the server.
          const calls = (yield* workers.callTool(id, "calls", {})).structuredContent as { calls: Array<unknown> }
          assert.strictEqual(calls.calls.length, 2)
          assert.deepStrictEqual((yield* workers.callTool(id, "inc", {})).structuredContent, { count: 1 })
        })
      )
  )

  it.live("C8: a request of the host and one on the owner's channel, at once: exactly one is sent", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        // Each lasts long enough at the server that the other, posted in the same step, reaches the owner meanwhile.
        const slow = { name: "sleep", arguments: { ms: 250 } }
        for (let round = 1; round <= 10; round++) {
          remote.direct(round, id, slow)
          const host = yield* Effect.either(workers.callTool(id, "sleep", { ms: 250 }))
          const answer = yield* remote.answer(round)
          const sent = (host._tag === "Right" ? 1 : 0) + (answer._tag === "Result" ? 1 : 0)
          assert.strictEqual(sent, 1, `round ${round}: ${JSON.stringify([host, answer])}`)
          const refused = host._tag === "Left" ? host.left : (answer.error as { _tag: string; delivery: string })
          assert.deepInclude(refused, { _tag: "WorkerBusy", delivery: "not_sent" })
          while ((yield* workers.status(id)).busy) yield* Effect.sleep(1)
        }
        const calls = (yield* workers.callTool(id, "calls", {})).structuredContent as { calls: Array<unknown> }
        // Ten sent, and this one.
        assert.strictEqual(calls.calls.length, 11)
      })
    )
  )

  it.live("C9, C10: the owner ends a request on its channel at its deadline and cancels exactly it", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        remote.direct(1, id, { name: "sleep", arguments: { ms: 5_000 } }, Date.now() + 300)
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        const { requestId } = yield* workers.status(id)
        const answer = yield* remote.answer(1)
        assert.deepInclude(answer.error as object, {
          _tag: "DeliveryUnknown",
          requestId,
          reason: "timeout",
          delivery: "unknown"
        })
        assert.isFalse((yield* workers.status(id)).busy)
        // A deadline already passed: never sent.
        remote.direct(2, id, { name: "inc", arguments: {} }, Date.now() - 1)
        assert.deepInclude((yield* remote.answer(2)).error as object, {
          _tag: "DeadlineExceeded",
          delivery: "not_sent"
        })
        assert.strictEqual(yield* abortedAtServer(workers, id, 1), 1)
        assert.deepStrictEqual((yield* workers.callTool(id, "inc", {})).structuredContent, { count: 1 })
      })
    )
  )

  it.live("C11, C12: an interruption on the owner's channel, and a cancel by the host, end exactly their request", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        remote.direct(1, id, { name: "sleep", arguments: { ms: 5_000 } })
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        const first = (yield* workers.status(id)).requestId
        remote.interrupt(1, id)
        assert.deepInclude((yield* remote.answer(1)).error as object, {
          _tag: "DeliveryUnknown",
          requestId: first,
          reason: "interrupted",
          delivery: "unknown"
        })
        remote.direct(2, id, { name: "sleep", arguments: { ms: 5_000 } })
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        const second = (yield* workers.status(id)).requestId!
        assert.notStrictEqual(second, first)
        yield* workers.cancel(id, second)
        assert.deepInclude((yield* remote.answer(2)).error as object, {
          _tag: "DeliveryUnknown",
          requestId: second,
          reason: "cancelled",
          delivery: "unknown"
        })
        assert.strictEqual((yield* Effect.flip(workers.cancel(id, second)))._tag, "RequestNotPending")
        assert.strictEqual(yield* abortedAtServer(workers, id, 2), 2)
      })
    )
  )

  it.live("C12: a cancel that meets the owner's success: it says cancelled exactly when its caller was told so", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        const seen = { cancelled: 0, completed: 0 }
        const calls = 48
        for (let callId = 1; callId <= calls; callId++) {
          remote.direct(callId, id, { name: "sleep", arguments: { ms: 10 } })
          // Its id once the host reports it; on a busy machine it may end before that.
          let requestId: string | null = null
          while (requestId === null && !remote.answers().some((reply) => reply.callId === callId)) {
            const status = yield* workers.status(id)
            if (status.busy) requestId = status.requestId
            else yield* Effect.sleep(1)
          }
          if (requestId === null) {
            seen.completed++
            assert.strictEqual((yield* remote.answer(callId))._tag, "Result")
            continue
          }
          // Around the moment the owner posts the success to its caller itself.
          yield* Effect.sleep(callId % 24)
          const cancel = yield* Effect.either(workers.cancel(id, requestId))
          const answer = yield* remote.answer(callId)
          if (cancel._tag === "Right") {
            seen.cancelled++
            assert.deepInclude(answer.error as object, { _tag: "DeliveryUnknown", requestId, reason: "cancelled" })
          } else {
            seen.completed++
            assert.strictEqual(cancel.left._tag, "RequestNotPending")
            assert.strictEqual(answer._tag, "Result")
          }
          assert.strictEqual(remote.answers().filter((reply) => reply.callId === callId).length, 1)
        }
        assert.isAbove(seen.cancelled, 0)
        assert.isAbove(seen.completed, 0)
        yield* Effect.sleep(100)
        assert.strictEqual(remote.answers().length, calls)
      })
    )
  )

  it.live("routes per worker are bounded: past 256, the oldest remote is told to relay again (Unrouted)", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const remotes = []
        for (let i = 0; i < 257; i++) {
          const remote = yield* rawRemote
          remote.post(1, echo(id, `r${i}`, { direct: true }))
          assert.strictEqual((yield* remote.answer(1))._tag, "RemoteSuccess")
          remotes.push(remote)
        }
        yield* Effect.sleep(100)
        assert.deepStrictEqual(
          remotes[0]!.replies.map((reply) => reply._tag),
          ["Route", "RemoteSuccess", "Unrouted"]
        )
        assert.deepStrictEqual(
          remotes[1]!.replies.map((reply) => reply._tag),
          ["Route", "RemoteSuccess"]
        )
        // The dropped remote is given the route again with its next relayed request.
        remotes[0]!.post(2, echo(id, "again", { direct: true }))
        assert.strictEqual((yield* remotes[0]!.answer(2))._tag, "RemoteSuccess")
        assert.strictEqual(remotes[0]!.replies.filter((reply) => reply._tag === "Route").length, 2)
      })
    )
  )

  it.live("close: the owner answers the request it took, then the remote learns that the worker ended", () =>
    withWorker((workers, id, remote) =>
      Effect.gen(function* () {
        // The first request, relayed, gives the route that `WorkerEnded` is announced to.
        remote.post(1, echo(id, "route", { direct: true }))
        assert.strictEqual((yield* remote.answer(1))._tag, "RemoteSuccess")
        remote.direct(2, id, { name: "sleep", arguments: { ms: 5_000 } })
        while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
        const { requestId } = yield* workers.status(id)
        yield* workers.close(id)
        yield* Effect.sleep(100)
        const tail = remote.replies.slice(-2)
        assert.deepInclude(tail[0]!.error as object, {
          _tag: "DeliveryUnknown",
          requestId,
          reason: "interrupted",
          delivery: "unknown"
        })
        assert.deepInclude(tail[1]!, { _tag: "WorkerEnded", workerId: id })
        assert.deepInclude(tail[1]!.error as object, { _tag: "UnknownWorker", delivery: "not_sent" })
        // Nobody listens on the channel any more: a request posted there is answered by no one.
        remote.direct(3, id, { name: "inc", arguments: {} })
        yield* Effect.sleep(200)
        assert.isUndefined(remote.replies.find((reply) => reply.callId === 3))
      })
    )
  )

  it.live("the owner thread dies: the remote given its route learns it, and answers what it sent there itself", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const threads = yield* startedThreads
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const remote = yield* rawRemote
          remote.post(1, echo(id, "route", { direct: true }))
          assert.strictEqual((yield* remote.answer(1))._tag, "RemoteSuccess")
          remote.direct(2, id, { name: "sleep", arguments: { ms: 5_000 } })
          while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
          const thread = yield* ownerThread(threads, (yield* workers.status(id)).threadId)
          yield* Effect.promise(() => thread.terminate())
          while (remote.replies.at(-1)?._tag !== "WorkerEnded") yield* Effect.sleep(10)
          const ended = remote.replies.at(-1)!
          assert.deepInclude(ended, { _tag: "WorkerEnded", workerId: id })
          assert.deepInclude(ended.error as object, { _tag: "WorkerFailed", kind: "thread" })
          // Nobody else answers the request the owner took: the remote client answers it unknown (RemoteRoutes).
          assert.isUndefined(remote.replies.find((reply) => reply.callId === 2))
          assert.isFalse((yield* workers.status(id)).busy)
          yield* workers.close(id)
        }).pipe(Effect.provide(NodeMcpWorkers.layer()))
      })
    )
  )
})
