// Trace context crosses threads with each request: a remote thread's call span is the parent of the host's span of a
// relayed call, itself the parent of the owner's span of it, and of the owner's span of a call straight to the owner
// thread (C83). A call made without a tracer carries nothing: on the direct path it leaves no span anywhere; relayed
// by a host that traces, it is a root of the host's trace. Each thread records its spans with a real
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
    "a remote call's span is the parent of the host's span of it (when relayed), and that of the owner's; an untraced call is a root of the host's",
    () =>
      Effect.gen(function* () {
        const isRequest = (span: RecordedSpan) => span.name === "HostServer.request" || span.name === "Owner.request"
        const host = yield* collect((span) => span.name === "HostServer.request", 3)
        const owner = yield* collect((span) => span.name === "Owner.request", 4)
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
        // The untraced calls came first. The host traces, so both went through it, though the second had the route
        // (C83): each is a root of the host's trace. Of the traced ones, the first was relayed, the second direct.
        assert.strictEqual(host.spans.filter(isRequest).length, 3)
        assert.strictEqual(owner.spans.filter(isRequest).length, 4)
        const roots = host.spans.filter((span) => isRequest(span) && span.parent === undefined)
        assert.strictEqual(roots.length, 2)
        for (const root of roots) assert.strictEqual(childrenOf(owner.spans, root).length, 1)
        for (const [call, direct] of [
          [calls[0]!, false],
          [calls[1]!, true]
        ] as const) {
          assert.strictEqual(call.parent, undefined)
          assert.deepStrictEqual(call.attributes.remote, true)
          const hostSpans = childrenOf(host.spans, call)
          assert.strictEqual(hostSpans.length, direct ? 0 : 1)
          if (!direct) {
            assert.deepInclude(hostSpans[0], { thread: "host", name: "HostServer.request" })
            assert.deepInclude(hostSpans[0]!.attributes, { method: "tools/call", direct: false })
          }
          // Relayed, the owner's span is the host's child; direct, the caller's.
          const [ownerSpan, ...moreOwner] = childrenOf(owner.spans, direct ? call : hostSpans[0]!)
          assert.strictEqual(moreOwner.length, 0)
          assert.deepInclude(ownerSpan, { thread: "owner", name: "Owner.request" })
          assert.deepInclude(ownerSpan!.attributes, { method: "tools/call", direct })
        }
      }),
    60_000
  )
})
