// C83: one trace from the caller into the server. A call made inside a span carries W3C `traceparent` in its `_meta`;
// the fixture server records the `_meta` of every tools/call it received (`metas`), and each is matched to the span
// ids the tracers of the caller's thread and of the owner thread recorded: from the host, from a remote thread (relayed
// and direct), on both protocol eras; without a tracer nothing is sent.
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { JsonObject } from "@mcp-worker/core/JsonValue"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { context as otelContext, createTraceState, propagation, ROOT_CONTEXT } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { ExportResultCode } from "@opentelemetry/core"
import { type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as fs from "node:fs"
import { BroadcastChannel } from "node:worker_threads"
import { modernConfig, statefulConfig } from "../fixtures/servers.js"
import { structured, tag } from "./helpers.js"
import { socketPath } from "./listenSandbox.js"
import { type RecordedSpan, recordingTracer, traceOwnerThreads } from "./recordingTracer.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const traceparent = (span: RecordedSpan) => `00-${span.traceId}-${span.spanId}-01`

/** The `traceparent` of each tools/call the worker's server received, in order (`null`: none). */
const received = (id: string) =>
  Effect.flatMap(McpWorkers, (workers) =>
    Effect.map(workers.callTool(id, "metas"), (result) =>
      (structured(result).metas as Array<{ traceparent?: string } | null>).map((meta) => meta?.traceparent ?? null)
    )
  )

/** Spans as they end, and a signal once `count` owner spans have ended. */
const collect = (count: number) =>
  Effect.map(Deferred.make<void>(), (done) => {
    const spans: Array<RecordedSpan> = []
    const record = (span: RecordedSpan) => {
      spans.push(span)
      if (spans.filter((s) => s.name === "Owner.request").length >= count) Deferred.unsafeDone(done, Effect.void)
    }
    return { spans, record, done: Deferred.await(done) }
  })

const childOf = (spans: ReadonlyArray<RecordedSpan>, parent: RecordedSpan) => {
  const children = spans.filter((span) => span.parent === parent.spanId && span.traceId === parent.traceId)
  assert.strictEqual(children.length, 1)
  return children[0]!
}

describe("C83: the caller's trace reaches the server in _meta", () => {
  it.live(
    "the owner's span of each traced call is the server's parent: host and remote thread, relayed and direct",
    () =>
      Effect.gen(function* () {
        const host: Array<RecordedSpan> = []
        // Owner spans of: the host's call, the remote's two traced calls.
        const owner = yield* collect(3)
        const channel = `mcp-worker-test/trace-meta/${tag()}`
        const listener = new BroadcastChannel(channel)
        listener.onmessage = (event) => owner.record((event as MessageEvent).data as RecordedSpan)
        const { metas, remote } = yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const traced = traceOwnerThreads(channel)
          const id = yield* workers.open(statefulConfig()).pipe(Effect.ensuring(Effect.sync(traced.restore)))
          yield* Effect.withTracer(
            workers.callTool(id, "echo", { token: "h" }),
            recordingTracer("host", host.push.bind(host))
          )
          const remote = yield* runInThread(entry(), { scenario: "traced", data: { id } })
          yield* owner.done
          const metas = yield* received(id)
          yield* workers.close(id)
          return { metas, remote }
        }).pipe(
          Effect.provide(NodeMcpWorkers.layer()),
          Effect.ensuring(Effect.sync(() => listener.close())),
          Effect.timeout("60 seconds")
        )
        assert.isTrue(remote.ok, JSON.stringify(remote))
        const hostCall = host.find((span) => span.name === "McpWorkers.callTool")!
        const remoteCalls = (remote.value as ReadonlyArray<RecordedSpan>).filter(
          (span) => span.name === "McpWorkers.callTool"
        )
        assert.strictEqual(remoteCalls.length, 2)
        // The host's traced call, the remote's two untraced calls, its two traced ones (relayed, then direct), and
        // the untraced `metas` call itself.
        assert.deepStrictEqual(metas, [
          traceparent(childOf(owner.spans, hostCall)),
          null,
          null,
          traceparent(childOf(owner.spans, remoteCalls[0]!)),
          traceparent(childOf(owner.spans, remoteCalls[1]!)),
          null
        ])
      }),
    90_000
  )

  it.live("without a tracer in the owner thread the caller's span is the parent, on both eras; untraced, none", () =>
    Effect.gen(function* () {
      const spans: Array<RecordedSpan> = []
      const tracer = recordingTracer("host", (span) => spans.push(span))
      const results = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const results: Array<{ readonly metas: ReadonlyArray<string | null>; readonly call: RecordedSpan }> = []
        for (const config of [statefulConfig(), modernConfig()]) {
          const id = yield* workers.open(config)
          yield* Effect.withTracer(workers.callTool(id, "echo", { token: "t" }), tracer)
          // A tracer, turned off for this call: nothing is sent.
          yield* Effect.withTracer(workers.callTool(id, "echo", { token: "off" }), tracer).pipe(
            Effect.withTracerEnabled(false)
          )
          yield* workers.callTool(id, "echo", { token: "u" })
          const metas = yield* received(id)
          results.push({ metas, call: spans.filter((span) => span.name === "McpWorkers.callTool").at(-1)! })
          yield* workers.close(id)
        }
        return results
      }).pipe(Effect.provide(NodeMcpWorkers.layer()), Effect.timeout("60 seconds"))
      for (const { metas, call } of results) assert.deepStrictEqual(metas, [traceparent(call), null, null, null])
    })
  )

  it.live("an owner process and McpClient send the caller's span too", () =>
    Effect.gen(function* () {
      const spans: Array<RecordedSpan> = []
      const tracer = recordingTracer("host", (span) => spans.push(span))
      const lastCall = () => spans.filter((span) => span.name === "McpWorkers.callTool").at(-1)!
      const inProcess = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig(), { isolation: "process" })
        yield* Effect.withTracer(workers.callTool(id, "echo", { token: "p" }), tracer)
        const metas = yield* received(id)
        yield* workers.close(id)
        return metas
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
      assert.deepStrictEqual(inProcess, [traceparent(lastCall()), null])
      const inClient = yield* Effect.scoped(
        Effect.gen(function* () {
          const client = yield* McpClient.make(statefulConfig())
          yield* Effect.withTracer(client.callTool("echo", { token: "c" }), tracer)
          const result = yield* client.callTool("metas")
          return (structured(result).metas as Array<{ traceparent?: string } | null>).map((m) => m?.traceparent ?? null)
        })
      )
      assert.deepStrictEqual(inClient, [traceparent(lastCall()), null])
    }).pipe(Effect.timeout("60 seconds"))
  )

  it.scopedLive("a socket peer's call: the listening host's span of it, a child of the peer's, is the parent", () =>
    Effect.gen(function* () {
      const hostSpans: Array<RecordedSpan> = []
      const peerSpans: Array<RecordedSpan> = []
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const hostTracer = recordingTracer("host", (span) => hostSpans.push(span))
      const peerTracer = recordingTracer("peer", (span) => peerSpans.push(span))
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true })).pipe(
        Effect.withTracer(hostTracer)
      )
      const workers = Context.get(host, McpWorkers)
      const id = yield* workers.open(statefulConfig())
      const peer = yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })).pipe(
        Effect.withTracer(peerTracer)
      )
      yield* Effect.withTracer(Context.get(peer, McpWorkers).callTool(id, "echo", { token: "s" }), peerTracer)
      const [sent] = yield* received(id).pipe(Effect.provideService(McpWorkers, workers))
      const call = peerSpans.find((span) => span.name === "McpWorkers.callTool")!
      const parent = hostSpans.find((span) => sent === traceparent(span))
      assert.isDefined(parent, `${sent} names a span of the listening host`)
      assert.strictEqual(parent!.traceId, call.traceId)
      assert.isDefined(peerSpans.find((span) => span.spanId === parent!.parent))
      yield* workers.close(id)
    }).pipe(Effect.timeout("60 seconds"))
  )
})

// C83, whatever the tracer: a span of Effect's default tracer records nothing, yet its ids are real W3C ids a caller
// may log; a call inside it sends them. Where the host traces, it continues a remote caller's relayed call.
const spannedOf = (value: unknown) => value as { readonly traceId: string; readonly spanId: string }
const parentOf = (span: { readonly traceId: string; readonly spanId: string }) => `00-${span.traceId}-${span.spanId}-01`

/** A call inside a plain `Effect.withSpan`, one there with tracing off, one outside any span: the span's ids. */
const spannedCalls = (call: (token: string) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const span = yield* Effect.currentSpan.pipe(
      Effect.tap(() => call("d")),
      Effect.withSpan("test.spanned")
    )
    yield* call("off").pipe(Effect.withSpan("test.off"), Effect.withTracerEnabled(false))
    yield* call("u")
    return span
  })

describe("C83: a span of any tracer is sent; a host that traces continues its callers' calls", () => {
  it.live("a span of Effect's default tracer reaches the server: host (both eras), owner process, McpClient", () =>
    Effect.gen(function* () {
      const results = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const results: Array<{ readonly metas: ReadonlyArray<string | null>; readonly span: RecordedSpan }> = []
        const placements: ReadonlyArray<
          readonly [ReturnType<typeof statefulConfig>, { readonly isolation: "process" } | undefined]
        > = [
          [statefulConfig(), undefined],
          [modernConfig(), undefined],
          [statefulConfig(), { isolation: "process" }]
        ]
        for (const [config, options] of placements) {
          const id = yield* workers.open(config, options)
          const span = yield* spannedCalls((token) => workers.callTool(id, "echo", { token }))
          results.push({ metas: yield* received(id), span: span as never })
          yield* workers.close(id)
        }
        return results
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
      for (const { metas, span } of results) assert.deepStrictEqual(metas, [parentOf(span), null, null, null])
      const inClient = yield* Effect.scoped(
        Effect.gen(function* () {
          const client = yield* McpClient.make(statefulConfig())
          const span = yield* spannedCalls((token) => client.callTool("echo", { token }))
          const result = yield* client.callTool("metas")
          const metas = (structured(result).metas as Array<{ traceparent?: string } | null>).map(
            (m) => m?.traceparent ?? null
          )
          return { metas, span }
        })
      )
      assert.deepStrictEqual(inClient.metas, [parentOf(inClient.span), null, null, null])
    }).pipe(Effect.timeout("60 seconds"))
  )

  it.live(
    "a remote thread: its span reaches the server; a host that traces roots each of its untraced calls",
    () =>
      Effect.gen(function* () {
        const host: Array<RecordedSpan> = []
        const run = (tracing: boolean) =>
          Effect.scoped(
            Effect.gen(function* () {
              const context = yield* Layer.build(NodeMcpWorkers.layer()).pipe(
                tracing ? Effect.withTracer(recordingTracer("host", host.push.bind(host))) : (built) => built
              )
              const workers = Context.get(context, McpWorkers)
              const id = yield* workers.open(statefulConfig())
              const remote = yield* runInThread(entry(), { scenario: "spanned", data: { id } })
              assert.isTrue(remote.ok, JSON.stringify(remote))
              const metas = yield* received(id).pipe(Effect.provideService(McpWorkers, workers))
              yield* workers.close(id)
              return { metas, span: spannedOf(remote.value) }
            })
          )
        // The first untraced call is relayed by the host; the spanned one goes straight to the owner thread, and so
        // does the last untraced one, unless the host traces: then the host relays it too, and roots it.
        const untracedHost = yield* run(false)
        assert.deepStrictEqual(untracedHost.metas, [null, parentOf(untracedHost.span), null, null])
        const tracingHost = yield* run(true)
        const relayed = host.filter((span) => span.name === "HostServer.request")
        assert.strictEqual(relayed.length, 2)
        for (const root of relayed) assert.isUndefined(root.parent, "an untraced caller's call is a root of the host's")
        assert.deepStrictEqual(tracingHost.metas, [
          traceparent(relayed[0]!),
          parentOf(tracingHost.span),
          traceparent(relayed[1]!),
          null
        ])
      }).pipe(Effect.timeout("90 seconds")),
    120_000
  )

  it.scopedLive("a socket peer: its span through a host that does not trace; an untraced call roots a host's", () =>
    Effect.gen(function* () {
      const hostSpans: Array<RecordedSpan> = []
      const listen = (tracing: boolean) =>
        Effect.gen(function* () {
          const socket = socketPath()
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
          const host = yield* Layer.build(
            NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true })
          ).pipe(
            tracing ? Effect.withTracer(recordingTracer("host", (span) => hostSpans.push(span))) : (built) => built
          )
          const workers = Context.get(host, McpWorkers)
          const id = yield* workers.open(statefulConfig())
          const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
          const span = yield* spannedCalls((token) => peer.callTool(id, "echo", { token }))
          // With progress, the streamed twin: the listener's rpc server runs it.
          const streamed = yield* Effect.currentSpan.pipe(
            Effect.tap(() => peer.callTool(id, "echo", { token: "p" }, { onProgress: () => {} })),
            Effect.withSpan("test.streamed")
          )
          const metas = yield* received(id).pipe(Effect.provideService(McpWorkers, workers))
          yield* workers.close(id)
          return { metas, span, streamed }
        })
      const plain = yield* listen(false)
      assert.deepStrictEqual(plain.metas, [parentOf(plain.span), null, null, parentOf(plain.streamed), null])
      const traced = yield* listen(true)
      // The tracing host's span of each call: the child of the peer's span, else (tracing off there, or no span) a root.
      const [spanned, root1, root2, streamed] = traced.metas.slice(0, 4).map((sent) => {
        const span = hostSpans.find((recorded) => sent === traceparent(recorded))
        assert.isDefined(span, `${sent} names a span of the listening host`)
        return span!
      })
      assert.strictEqual(spanned!.traceId, traced.span.traceId)
      assert.strictEqual(spanned!.parent, traced.span.spanId)
      assert.strictEqual(streamed!.parent, traced.streamed.spanId)
      for (const root of [root1, root2]) assert.isUndefined(root!.parent)
    }).pipe(Effect.timeout("60 seconds"))
  )
})

// C84: what the caller's trace carries besides its ids. The caller runs `@effect/opentelemetry` with a real
// OpenTelemetry tracer, inside a span of another process whose context has a trace state, and with baggage in the
// active OpenTelemetry context (an AsyncLocalStorage context manager, as an OpenTelemetry Node SDK registers one).
describe("C84: the trace's tracestate and baggage reach the server beside traceparent", () => {
  const incoming = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" }
  const traceState = "vendor=incoming,other@tenant=x"
  const baggage = "user=alice%20smith,tier=gold"
  const contextManager = new AsyncLocalStorageContextManager()
  beforeAll(() => void otelContext.setGlobalContextManager(contextManager.enable()))
  afterAll(() => otelContext.disable())

  type Meta = { traceparent?: string; tracestate?: string; baggage?: string } | null
  /** The trace keys of each tools/call's `_meta` (a 2026-07-28 request has keys of its own there): `null`, none. */
  const metasOf = (result: { structuredContent?: unknown }) =>
    (structured(result).metas as Array<Record<string, unknown> | null>).map((meta): Meta => {
      const keys = ["traceparent", "tracestate", "baggage"].filter((key) => meta?.[key] !== undefined)
      return keys.length === 0 ? null : Object.fromEntries(keys.map((key) => [key, meta![key]]))
    })

  /**
   * Runs `call` with the baggage in the active OpenTelemetry context, and, unless `traced` is false, with an
   * OpenTelemetry tracer inside the incoming span: the call's own span, if one was recorded.
   */
  const inContext = <A, E>(call: Effect.Effect<A, E>, traced: "on" | "off" | "none") =>
    Effect.gen(function* () {
      // The spans as they end (an in-memory exporter forgets them when the provider shuts down with the layer).
      const ended: Array<ReadableSpan> = []
      const tracer = NodeSdk.layer(() => ({
        spanProcessor: new SimpleSpanProcessor({
          export: (spans, done) => {
            ended.push(...spans)
            done({ code: ExportResultCode.SUCCESS })
          },
          shutdown: () => Promise.resolve()
        }),
        resource: { serviceName: "caller" }
      }))
      const run =
        traced === "none"
          ? call
          : call.pipe(
              OtelTracer.withSpanContext({
                ...incoming,
                traceFlags: 1,
                isRemote: true,
                traceState: createTraceState(traceState)
              }),
              Effect.withTracerEnabled(traced === "on"),
              Effect.provide(tracer)
            )
      const context = propagation.setBaggage(
        ROOT_CONTEXT,
        propagation.createBaggage({ user: { value: "alice smith" }, tier: { value: "gold" } })
      )
      yield* Effect.flatten(Effect.promise(() => otelContext.with(context, () => Effect.runPromiseExit(run))))
      return ended.find((span) => span.name.endsWith(".callTool"))?.spanContext()
    })

  /** Calls echo traced, traced with tracing turned off, and untraced, then asks `metas`: what each call carried. */
  const exercise = (
    callTool: (tool: string, args?: JsonObject) => Effect.Effect<{ structuredContent?: unknown }, unknown>
  ) =>
    Effect.gen(function* () {
      const span = yield* inContext(callTool("echo", { token: "t" }), "on")
      assert.isDefined(span)
      assert.strictEqual(span!.traceId, incoming.traceId)
      yield* inContext(callTool("echo", { token: "off" }), "off")
      yield* inContext(callTool("echo", { token: "u" }), "none")
      const metas = metasOf(yield* callTool("metas"))
      assert.deepStrictEqual(metas, [
        { traceparent: `00-${span!.traceId}-${span!.spanId}-01`, tracestate: traceState, baggage },
        null,
        null,
        null
      ])
    })

  it.live(
    "from the host to an owner thread and an owner process, on both eras, and from McpClient",
    () =>
      Effect.gen(function* () {
        yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          for (const [config, options] of [
            [statefulConfig(), undefined],
            [modernConfig(), undefined],
            [statefulConfig(), { isolation: "process" as const }]
          ] as const) {
            const id = yield* workers.open(config, options)
            yield* exercise((tool, args) => workers.callTool(id, tool, args))
            yield* workers.close(id)
          }
        }).pipe(Effect.provide(NodeMcpWorkers.layer()))
        yield* Effect.scoped(
          Effect.flatMap(McpClient.make(statefulConfig()), (client) =>
            exercise((tool, args) => client.callTool(tool, args))
          )
        )
      }).pipe(Effect.timeout("90 seconds")),
    120_000
  )

  it.live("from a remote thread, relayed and direct, through the owner thread's own spans: the trace state kept", () =>
    Effect.gen(function* () {
      const owner = yield* collect(2)
      const channel = `mcp-worker-test/trace-state/${tag()}`
      const listener = new BroadcastChannel(channel)
      listener.onmessage = (event) => owner.record((event as MessageEvent).data as RecordedSpan)
      const { metas, remote } = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const traced = traceOwnerThreads(channel)
        const id = yield* workers.open(statefulConfig()).pipe(Effect.ensuring(Effect.sync(traced.restore)))
        const remote = yield* runInThread(entry(), { scenario: "tracedState", data: { id, ...incoming, traceState } })
        yield* owner.done
        const metas = metasOf(yield* workers.callTool(id, "metas"))
        yield* workers.close(id)
        return { metas, remote }
      }).pipe(
        Effect.provide(NodeMcpWorkers.layer()),
        Effect.ensuring(Effect.sync(() => listener.close())),
        Effect.timeout("60 seconds")
      )
      assert.isTrue(remote.ok, JSON.stringify(remote))
      const calls = (remote.value as ReadonlyArray<RecordedSpan>).filter((span) => span.name === "McpWorkers.callTool")
      assert.strictEqual(calls.length, 2)
      assert.strictEqual(calls[0]!.traceId, incoming.traceId)
      // The owner thread's span of each call is the server's parent, and the trace state the caller's trace carried
      // crossed both threads with it (the untraced `metas` call carries none).
      assert.deepStrictEqual(metas, [
        ...calls.map((call) => ({ traceparent: traceparent(childOf(owner.spans, call)), tracestate: traceState })),
        null
      ])
    })
  )

  it.scopedLive("from a socket peer: the rpc envelope's ids, and the trace state and baggage beside them", () =>
    Effect.gen(function* () {
      const hostSpans: Array<RecordedSpan> = []
      const peerSpans: Array<RecordedSpan> = []
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const hostTracer = recordingTracer("host", (span) => hostSpans.push(span))
      const peerTracer = recordingTracer("peer", (span) => peerSpans.push(span))
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true })).pipe(
        Effect.withTracer(hostTracer)
      )
      const workers = Context.get(host, McpWorkers)
      const id = yield* workers.open(statefulConfig())
      const peer = Context.get(
        yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })).pipe(Effect.withTracer(peerTracer)),
        McpWorkers
      )
      const call = peer
        .callTool(id, "echo", { token: "s" })
        .pipe(
          Effect.withParentSpan(OtelTracer.makeExternalSpan({ ...incoming, traceFlags: 1, traceState })),
          Effect.withTracer(peerTracer)
        )
      const context = propagation.setBaggage(
        ROOT_CONTEXT,
        propagation.createBaggage({ user: { value: "alice smith" }, tier: { value: "gold" } })
      )
      yield* Effect.flatten(Effect.promise(() => otelContext.with(context, () => Effect.runPromiseExit(call))))
      const [sent] = metasOf(yield* workers.callTool(id, "metas"))
      const parent = hostSpans.find((span) => sent?.traceparent === traceparent(span))
      assert.isDefined(parent, `${sent?.traceparent} names a span of the listening host`)
      assert.strictEqual(parent!.traceId, incoming.traceId)
      assert.deepStrictEqual(sent, { traceparent: traceparent(parent!), tracestate: traceState, baggage })
      yield* workers.close(id)
    }).pipe(Effect.timeout("60 seconds"))
  )
})
