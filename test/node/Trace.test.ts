// Trace context crosses threads with each request: a remote thread's call span is the parent of the host's span and
// of the owner's span of that call, on both remote paths (relayed by the host, straight to the owner thread), and a
// call made without a tracer carries nothing and leaves no span anywhere. Each thread records its spans with a real
// tracer (recordingTracer.ts): the host in this thread, the remote in a thread of remote-entry.ts, the owner in its
// owner thread (started through a bootstrap that installs the tracer there).
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { BroadcastChannel } from "node:worker_threads"
import { statefulConfig } from "../fixtures/servers.js"
import { tag } from "./helpers.js"
import { type RecordedSpan, recordingTracer, traceOwnerThreads } from "./recordingTracer.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

/** Spans as they end, and a signal once `count` of those that `counts` picks have ended. */
const collect = (counts: (span: RecordedSpan) => boolean, count: number) =>
  Effect.map(Deferred.make<void>(), (done) => {
    const spans: Array<RecordedSpan> = []
    const record = (span: RecordedSpan) => {
      spans.push(span)
      if (spans.filter(counts).length >= count) Deferred.unsafeDone(done, Effect.void)
    }
    return { spans, record, done: Deferred.await(done) }
  })

const childrenOf = (spans: ReadonlyArray<RecordedSpan>, parent: RecordedSpan) =>
  spans.filter((span) => span.parent === parent.spanId && span.traceId === parent.traceId)

describe("trace context across threads", () => {
  it.live(
    "a remote call's span is the parent of the owner's span of it (and the host's, when relayed); an untraced call leaves none",
    () =>
      Effect.gen(function* () {
        const isRequest = (span: RecordedSpan) => span.name === "HostServer.request" || span.name === "Owner.request"
        const host = yield* collect((span) => span.name === "HostServer.request", 1)
        const owner = yield* collect((span) => span.name === "Owner.request", 2)
        const channel = `mcp-worker-test/spans/${tag()}`
        const listener = new BroadcastChannel(channel)
        listener.onmessage = (event) => owner.record((event as MessageEvent).data as RecordedSpan)
        const remote = yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const traced = traceOwnerThreads(channel)
          const id = yield* workers.open(statefulConfig()).pipe(Effect.ensuring(Effect.sync(traced.restore)))
          const outcome = yield* runInThread(entry(), { scenario: "traced", data: { id } })
          yield* host.done
          yield* owner.done
          yield* workers.close(id)
          return outcome
        }).pipe(
          Effect.provide(NodeMcpWorkers.layer()),
          Effect.withTracer(recordingTracer("host", host.record)),
          Effect.ensuring(Effect.sync(() => listener.close())),
          Effect.timeout("30 seconds")
        )
        assert.isTrue(remote.ok, JSON.stringify(remote))
        const calls = (remote.value as ReadonlyArray<RecordedSpan>).filter(
          (span) => span.name === "McpWorkers.callTool"
        )
        assert.strictEqual(calls.length, 2)
        // The untraced calls came first, each on the same path as a traced one: none of them left a span.
        // The host is not on the way of a direct call: only the relayed one has a host span.
        assert.strictEqual(host.spans.filter(isRequest).length, 1)
        assert.strictEqual(owner.spans.filter(isRequest).length, 2)
        for (const [call, direct] of [
          [calls[0]!, false],
          [calls[1]!, true]
        ] as const) {
          assert.strictEqual(call.parent, undefined)
          assert.deepStrictEqual(call.attributes.remote, true)
          const hostSpans = childrenOf(host.spans, call)
          const [ownerSpan, ...moreOwner] = childrenOf(owner.spans, call)
          assert.deepStrictEqual([hostSpans.length, moreOwner.length], [direct ? 0 : 1, 0])
          if (!direct) {
            assert.deepInclude(hostSpans[0], { thread: "host", name: "HostServer.request" })
            assert.deepInclude(hostSpans[0]!.attributes, { method: "tools/call", direct: false })
          }
          assert.deepInclude(ownerSpan, { thread: "owner", name: "Owner.request" })
          assert.deepInclude(ownerSpan!.attributes, { method: "tools/call", direct })
        }
      }),
    60_000
  )
})
