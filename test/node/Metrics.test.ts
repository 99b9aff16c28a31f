// C80–C82: the host's metrics, scraped from a real Prometheus exporter over HTTP on 127.0.0.1 after calls whose
// outcomes are known, and the host's view of its workers. The fixture server runs as a real process.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { HostView, McpGrants, McpServe, NodeMcpWorkers, WorkerMetrics } from "@mcp-worker/node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { prometheus, samplesOf, valueOf } from "../../examples/observability/prometheus.js"
import { statefulConfig } from "../fixtures/servers.js"
import { socketPath } from "./listenSandbox.js"
import * as RemoteProtocol from "../../packages/node/src/internal/thread/protocol.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

const server = "stateful-fixture"

/** Waits until the worker reports a request in flight: the busy refusal below is then certain. */
const untilBusy = (id: string) =>
  Effect.flatMap(McpWorkers, (workers) =>
    workers
      .status(id)
      .pipe(Effect.repeat({ schedule: Schedule.spaced("5 millis"), until: (status) => status.busy }), Effect.asVoid)
  )

/** Each of the host's metrics in a scrape (Prometheus names), with the label names its samples carry. */
const exportedLabels = (samples: ReturnType<typeof samplesOf>) =>
  Object.fromEntries(
    WorkerMetrics.names.flatMap((name) => {
      const base = name.replaceAll(".", "_")
      const own = samples.filter((sample) =>
        [base, `${base}_total`, `${base}_bucket`, `${base}_count`, `${base}_sum`].includes(sample.name)
      )
      const keys = new Set(own.flatMap((sample) => Object.keys(sample.labels)))
      for (const added of ["le", "otel_scope_name"]) keys.delete(added)
      return own.length === 0 ? [] : [[name, [...keys].sort()]]
    })
  )

/** What `WorkerMetrics.labels` declares of the same metrics, as Prometheus writes label names. */
const declaredLabels = (samples: ReturnType<typeof samplesOf>) =>
  Object.fromEntries(
    Object.keys(exportedLabels(samples)).map((name) => [
      name,
      WorkerMetrics.labels[name]!.map((label) => label.replaceAll(".", "_")).sort()
    ])
  )

/** Two requests posted on the host's channel as a remote thread posts them, and the tags of the host's answers. */
const remoteRefusals = (workerId: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => ({
      host: new BroadcastChannel(RemoteProtocol.hostChannel),
      reply: new BroadcastChannel(`mcp-worker-test-reply-${process.pid}-${Date.now()}`)
    })),
    ({ host, reply }) =>
      Effect.async<Array<string>>((resume) => {
        const tags: Array<string> = []
        reply.onmessage = (event) => {
          const message = (event as MessageEvent).data as { _tag: string; callId: number; error?: { _tag: string } }
          if (message._tag !== "RemoteFailure") return
          tags[message.callId - 1] = message.error!._tag
          if (tags.filter((tag) => tag !== undefined).length === 2) resume(Effect.succeed(tags))
        }
        const call = (params: string) => ({ _tag: "RemoteCall", workerId, method: "tools/call", params })
        host.postMessage({
          _tag: "RemoteRequest",
          from: reply.name,
          callId: 1,
          ackBy: Date.now() - 1000,
          operation: call(JSON.stringify({ name: "echo" }))
        })
        host.postMessage({ _tag: "RemoteRequest", from: reply.name, callId: 2, operation: call("[1]") })
      }),
    ({ host, reply }) =>
      Effect.sync(() => {
        host.close()
        reply.close()
      })
  )

describe("C80: metrics of every worker, scraped from a Prometheus endpoint", () => {
  it.scopedLive("counts each outcome with its delivery, the durations, the spill, the close and the tree", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-metrics-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const before = samplesOf(yield* endpoint.scrape)
      const rows = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const view = yield* HostView.HostView
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: 4096 }, { onTooLarge: { spill: dir } })
        yield* workers.callTool(id, "echo", { token: "a" })
        const isError = yield* workers.callTool(id, "fail")
        assert.isTrue(isError.isError)
        const spilled = yield* workers.callTool(id, "big", { bytes: 10_000 })
        assert.strictEqual((spilled as { spilled?: boolean }).spilled, true)
        const timeout = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 60_000 }, { timeout: "200 millis" }))
        assert.strictEqual(timeout._tag, "DeliveryUnknown")
        const holder = yield* Effect.fork(Effect.flip(workers.callTool(id, "sleep", { ms: 60_000 })))
        yield* untilBusy(id)
        const busy = yield* Effect.flip(workers.callTool(id, "echo", { token: "b" }))
        assert.strictEqual(busy._tag, "WorkerBusy")
        const [row] = yield* view.snapshot
        yield* workers.cancel(id, (yield* workers.status(id)).requestId!)
        assert.strictEqual((yield* Fiber.join(holder))._tag, "DeliveryUnknown")
        // The sampler's first pass over /proc with this worker ready (every second here).
        const [sampled] = yield* view.snapshot.pipe(
          Effect.filterOrFail(([only]) => only?.tree !== null),
          Effect.retry(Schedule.spaced("20 millis"))
        )
        const live = samplesOf(yield* endpoint.scrape)
        yield* workers.close(id)
        return { id, row: row!, sampled: sampled!, live, after: yield* view.snapshot }
      }).pipe(Effect.provide(NodeMcpWorkers.layerWithView({ treeSampleInterval: "1 second" })))
      const after = samplesOf(yield* endpoint.scrape)
      const delta = (name: string, labels: Record<string, string>) =>
        valueOf(after, name, { mcp_worker_server: server, ...labels }) -
        valueOf(before, name, { mcp_worker_server: server, ...labels })
      const requests = (outcome: string, delivery: string) =>
        delta("mcp_worker_requests_total", { mcp_worker_outcome: outcome, mcp_worker_delivery: delivery })
      assert.deepStrictEqual(
        {
          result: requests("result", "delivered"),
          isError: requests("is_error", "delivered"),
          busy: requests("WorkerBusy", "not_sent"),
          unknown: requests("DeliveryUnknown", "unknown")
        },
        { result: 2, isError: 1, busy: 1, unknown: 2 }
      )
      const host = { mcp_worker_surface: "host", mcp_method_name: "tools/call" }
      assert.strictEqual(delta("mcp_worker_requests_total", host), 6)
      // Every request sent has a duration (the busy refusal was never sent), and none is left in flight.
      assert.strictEqual(delta("mcp_client_operation_duration_seconds_count", host), 5)
      // C120: each exported series has exactly its metric's labels; none carries a unit.
      assert.deepStrictEqual(exportedLabels(after), declaredLabels(after))
      assert.strictEqual(delta("mcp_worker_requests_in_flight", {}), 0)
      assert.strictEqual(delta("mcp_worker_spills_total", {}), 1)
      assert.isAtLeast(delta("mcp_worker_spill_size_bytes_total", {}), 10_000)
      assert.strictEqual(delta("mcp_worker_open_duration_seconds_count", { mcp_worker_outcome: "ready" }), 1)
      assert.strictEqual(delta("mcp_worker_close_duration_seconds_count", { mcp_worker_outcome: "closed" }), 1)
      assert.strictEqual(delta("mcp_worker_cleanups_total", { mcp_worker_outcome: "confirmed" }), 1)
      assert.strictEqual(
        valueOf(after, "mcp_worker_workers", { mcp_worker_server: server, mcp_worker_state: "ready" }),
        0
      )
      // The view: busy with the request in flight, its counts, and (once sampled) its tree's memory.
      assert.strictEqual(rows.row.workerId, rows.id)
      assert.strictEqual(rows.row.server, server)
      assert.strictEqual(rows.row.state, "ready")
      assert.isNotNull(rows.row.busy)
      assert.deepStrictEqual(rows.row.requests, { results: 2, isError: 1, errors: 0, notSent: 1, unknown: 1 })
      assert.isAbove(rows.sampled.tree!.rssBytes, 1024 * 1024)
      assert.deepStrictEqual(rows.after, [])
      assert.isAbove(valueOf(rows.live, "process_memory_usage_bytes", { mcp_worker_server: server }), 1024 * 1024)
      assert.isAbove(valueOf(rows.live, "process_cpu_time_seconds", { mcp_worker_server: server }), 0)
    })
  )

  it.scopedLive("a remote thread's calls, relayed and straight to the owner thread, are counted by the host", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-metrics-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const thread = { mcp_worker_server: server, mcp_worker_surface: "thread" }
      const count = (samples: ReturnType<typeof samplesOf>, outcome: string) =>
        valueOf(samples, "mcp_worker_requests_total", { ...thread, mcp_worker_outcome: outcome })
      const spills = (samples: ReturnType<typeof samplesOf>) =>
        valueOf(samples, "mcp_worker_spills_total", { mcp_worker_server: server })
      const before = samplesOf(yield* endpoint.scrape)
      const outcomes = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: 4096 }, { onTooLarge: { spill: dir } })
        const calls = [
          { tool: "echo", args: { token: "r" } },
          { tool: "fail" },
          { tool: "big", args: { bytes: 10_000 } }
        ]
        const outcome = yield* runInThread(entry(), { scenario: "calls", data: { id, calls } })
        yield* workers.close(id)
        return outcome
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
      assert.deepStrictEqual(outcomes, { ok: true, value: ["result", "isError", "result"] })
      // The direct ones went from the owner thread to the caller; what the owner counted of them (isError, the
      // spill's size) reaches the host in its next batch (`Observed`), within a quarter of a second.
      const counted = (after: ReturnType<typeof samplesOf>) => ({
        result: count(after, "result") - count(before, "result"),
        isError: count(after, "is_error") - count(before, "is_error"),
        spills: spills(after) - spills(before)
      })
      let seen = counted(samplesOf(yield* endpoint.scrape))
      for (let i = 0; i < 100 && seen.result + seen.isError < 3; i++) {
        yield* Effect.sleep(20)
        seen = counted(samplesOf(yield* endpoint.scrape))
      }
      assert.deepStrictEqual(seen, { result: 2, isError: 1, spills: 1 })
    })
  )

  it.scopedLive("a socket peer's calls are counted by the listening host, as surface socket", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const labels = { mcp_worker_server: server, mcp_worker_surface: "socket" }
      const count = (samples: ReturnType<typeof samplesOf>, outcome: string) =>
        valueOf(samples, "mcp_worker_requests_total", { ...labels, mcp_worker_outcome: outcome })
      const before = samplesOf(yield* endpoint.scrape)
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true }))
      const workers = Context.get(host, McpWorkers)
      const id = yield* workers.open(statefulConfig())
      const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
      yield* peer.callTool(id, "echo", { token: "s" })
      assert.isTrue((yield* peer.callTool(id, "fail")).isError)
      // A refusal the listener answers at once, from the host's record of the busy worker, is counted once too (C86).
      const sleeping = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 60_000 }))
      while (!(yield* workers.status(id)).busy) yield* Effect.sleep(5)
      const refused = yield* Effect.flip(peer.callTool(id, "echo", { token: "b" }))
      assert.strictEqual(refused._tag, "WorkerBusy")
      yield* Fiber.interrupt(sleeping)
      yield* workers.close(id)
      const after = samplesOf(yield* endpoint.scrape)
      assert.deepStrictEqual(
        ["result", "is_error", "WorkerBusy"].map((outcome) => count(after, outcome) - count(before, outcome)),
        [1, 1, 1]
      )
    })
  )

  it.scopedLive(
    "C117: every refusal before anything was sent is counted once, where it is made, on every surface",
    () =>
      Effect.gen(function* () {
        const { endpoint, layer } = yield* prometheus("mcp-worker-test")
        yield* Layer.build(layer)
        const socket = socketPath()
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
        const count = (samples: ReturnType<typeof samplesOf>, labels: Record<string, string>) =>
          valueOf(samples, "mcp_worker_requests_total", labels)
        const before = samplesOf(yield* endpoint.scrape)
        const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path }))
        const workers = Context.get(host, McpWorkers)
        const grants = Context.get(host, McpGrants.McpGrants)
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id, { tools: ["echo"] })
        const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
        const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.map(Effect.flip(effect), (error) => error._tag)
        const onProgress = () => {}
        const seen = {
          // The listener's own refusals: a tool outside the grant (plain and streamed), a made-up grant, a task the
          // grant did not start; then the host's own: arguments that are not JSON, an id that is not a string.
          socketTool: yield* tagOf(peer.callTool(grant, "fail")),
          socketToolStreamed: yield* tagOf(peer.callTool(grant, "fail", {}, { onProgress })),
          socketGrant: yield* tagOf(peer.callTool("made-up-grant", "echo", { token: "x" })),
          socketTask: yield* tagOf(peer.getTask(grant, "a-task-of-another")),
          hostArguments: yield* tagOf(workers.callTool(id, "echo", { token: () => 1 } as never)),
          hostId: yield* tagOf(workers.callTool(42 as never, "echo"))
        }
        // A remote thread's call to a worker the host does not hold: refused by the host.
        const remote = yield* runInThread(entry(), {
          scenario: "calls",
          data: { id: "mcpw_madeup", calls: [{ tool: "echo" }] }
        })
        // What the host's own checks refuse of a remote's request, posted on its channel as a remote thread posts it:
        // one read past its ackBy, one whose params are not an object.
        const raw = yield* remoteRefusals(id)
        yield* workers.close(id)
        const after = samplesOf(yield* endpoint.scrape)
        const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels)
        const notSent = (surface: string, outcome: string, serverName: string) =>
          delta({
            mcp_worker_server: serverName,
            mcp_worker_surface: surface,
            mcp_worker_outcome: outcome,
            mcp_worker_delivery: "not_sent"
          })
        assert.deepStrictEqual(
          { seen, remote, raw },
          {
            seen: {
              socketTool: "InvalidInput",
              socketToolStreamed: "InvalidInput",
              socketGrant: "UnknownWorker",
              socketTask: "InvalidInput",
              hostArguments: "InvalidInput",
              hostId: "InvalidInput"
            },
            remote: { ok: true, value: ["UnknownWorker"] },
            raw: ["HostUnavailable", "InvalidInput"]
          }
        )
        assert.deepStrictEqual(
          {
            socketInvalid: notSent("socket", "InvalidInput", server),
            socketUnknown: notSent("socket", "UnknownWorker", "unknown"),
            hostInvalid: notSent("host", "InvalidInput", server) + notSent("host", "InvalidInput", "unknown"),
            threadUnknown: notSent("thread", "UnknownWorker", "unknown"),
            threadLate: notSent("thread", "HostUnavailable", server),
            threadInvalid: notSent("thread", "InvalidInput", server)
          },
          { socketInvalid: 3, socketUnknown: 1, hostInvalid: 2, threadUnknown: 1, threadLate: 1, threadInvalid: 1 }
        )
      })
  )

  it.scopedLive("notifications a full subscriber had no room for are counted as dropped, with the view's count", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const dropped = (samples: ReturnType<typeof samplesOf>) =>
        valueOf(samples, "mcp_worker_notifications_dropped_total", { mcp_worker_server: server })
      const before = samplesOf(yield* endpoint.scrape)
      const { seen, row, closed } = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const view = yield* HostView.HostView
        const id = yield* workers.open(statefulConfig())
        const notify = (count: number) => workers.callTool(id, "notify", { methods: ["notifications/message"], count })
        return yield* Effect.scoped(
          Effect.gen(function* () {
            // A subscriber with room for one: its first read, of the first notification, says it is subscribed.
            const pull = yield* Stream.toPull(workers.events(id, { capacity: 1 }))
            const first = yield* Effect.fork(pull)
            yield* notify(1).pipe(Effect.repeat({ until: () => first.unsafePoll() !== null }))
            const seen = Chunk.size(yield* Fiber.join(first))
            // The server's ten notifications arrive before its answer: the room holds one at most (a notification
            // sent while the first read was ending may hold it already), so at least nine are dropped.
            yield* notify(10)
            const [row] = yield* view.snapshot
            // Closing ends the stream: its end takes the room of the notification still held, one more drop.
            const closed = yield* workers.close(id)
            return { seen, row: row!, closed }
          })
        )
      }).pipe(Effect.provide(NodeMcpWorkers.layerWithView()))
      const after = samplesOf(yield* endpoint.scrape)
      assert.isAtLeast(seen, 1)
      assert.isAtLeast(row.notifications.dropped, 9)
      assert.strictEqual(closed.notifications.dropped, row.notifications.dropped + 1)
      assert.strictEqual(dropped(after) - dropped(before), closed.notifications.dropped)
    })
  )

  it.scopedLive(
    "a worker is labelled by the name its open or its openAll entry gave it; a bad name opens nothing",
    () =>
      Effect.gen(function* () {
        const { endpoint, layer } = yield* prometheus("mcp-worker-test")
        yield* Layer.build(layer)
        const results = (samples: ReturnType<typeof samplesOf>, name: string) =>
          valueOf(samples, "mcp_worker_requests_total", { mcp_worker_server: name, mcp_worker_outcome: "result" })
        const before = samplesOf(yield* endpoint.scrape)
        const { rows, refused } = yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          const view = yield* HostView.HostView
          const named = yield* workers.open(statefulConfig(), { name: "named-worker" })
          const document = Either.getOrThrow(
            McpConfig.fromCursor(JSON.stringify({ mcpServers: { alpha: statefulConfig() } }))
          )
          const opened = yield* workers.openAll(document)
          // A remote thread's open carries the name too.
          const remote = yield* runInThread(entry(), {
            scenario: "open",
            data: { config: statefulConfig(), options: { name: "remote-named" } }
          })
          assert.isTrue(remote.ok, JSON.stringify(remote))
          const fromThread = remote.value as string
          for (const id of [named, (opened.alpha as { id: string }).id, fromThread]) {
            yield* workers.callTool(id, "echo", { token: "n" })
          }
          const rows = yield* view.snapshot
          const refused = yield* Effect.flip(workers.open(statefulConfig(), { name: "" }))
          yield* workers.close(named)
          yield* workers.close(fromThread)
          yield* workers.closeAll(opened)
          return { rows, refused }
        }).pipe(Effect.provide(NodeMcpWorkers.layerWithView()))
        const after = samplesOf(yield* endpoint.scrape)
        assert.deepStrictEqual(
          ["named-worker", "alpha", "remote-named"].map((name) => results(after, name) - results(before, name)),
          [1, 1, 1]
        )
        assert.deepStrictEqual(rows.map((row) => [row.name, row.server]).sort(), [
          ["alpha", server],
          ["named-worker", server],
          ["remote-named", server]
        ])
        assert.deepInclude(refused, { _tag: "InvalidInput", path: "options.name", delivery: "not_sent" })
      })
  )

  it.scopedLive("a host with metrics off records nothing of its workers", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const count = (samples: ReturnType<typeof samplesOf>) =>
        valueOf(samples, "mcp_worker_requests_total", { mcp_worker_server: server }) +
        valueOf(samples, "mcp_worker_open_duration_seconds_count", { mcp_worker_server: server })
      const before = count(samplesOf(yield* endpoint.scrape))
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        yield* workers.callTool(id, "echo", { token: "a" })
        yield* workers.close(id)
      }).pipe(Effect.provide(NodeMcpWorkers.layer({ metrics: false })))
      assert.strictEqual(count(samplesOf(yield* endpoint.scrape)), before)
    })
  )

  it("C120: the README's metric table names every metric with its labels, and nothing else", () => {
    const readme = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../../README.md"), "utf8")
    const section = readme.slice(readme.indexOf("## Observability"))
    const rows = Array.from(section.matchAll(/^\| `([a-z_.]+)` \| [^|]+ \| ([^|]+) \|/gm), (match) => [
      match[1]!,
      Array.from(match[2]!.matchAll(/`([a-z_.]+)`/g), (label) => label[1]!).filter((label) =>
        Object.values(WorkerMetrics.labels).some((labels) => labels.includes(label))
      )
    ])
    assert.deepStrictEqual(
      Object.fromEntries(rows),
      Object.fromEntries(WorkerMetrics.names.map((name) => [name, [...WorkerMetrics.labels[name]!]]))
    )
  })
})

describe("C118: one host, any set of planes", () => {
  it.scopedLive("a socket host has its view and its metrics, all of one registry", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const results = (samples: ReturnType<typeof samplesOf>) =>
        valueOf(samples, "mcp_worker_requests_total", {
          mcp_worker_server: server,
          mcp_worker_surface: "socket",
          mcp_worker_outcome: "result"
        })
      const before = samplesOf(yield* endpoint.scrape)
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path }))
      const workers = Context.get(host, McpWorkers)
      const view = Context.get(host, HostView.HostView)
      const id = yield* workers.open(statefulConfig())
      const grant = yield* Context.get(host, McpGrants.McpGrants).grant(id, { tools: ["echo"] })
      const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
      yield* peer.callTool(grant, "echo", { token: "v" })
      yield* Effect.flip(peer.callTool(grant, "fail"))
      yield* workers.callTool(id, "echo", { token: "h" })
      const [row] = yield* view.snapshot
      const after = samplesOf(yield* endpoint.scrape)
      yield* workers.close(id)
      assert.deepStrictEqual(
        { workerId: row?.workerId, requests: row?.requests, socketResults: results(after) - results(before) },
        {
          workerId: id,
          requests: { results: 2, isError: 0, errors: 0, notSent: 1, unknown: 0 },
          socketResults: 1
        }
      )
    })
  )
})

describe("C80, C117: the gateway is a surface of its own", () => {
  it.scopedLive("a gateway client's call and the gateway's refusal, counted once each under gateway", () =>
    Effect.gen(function* () {
      const { endpoint, layer } = yield* prometheus("mcp-worker-test")
      yield* Layer.build(layer)
      const count = (samples: ReturnType<typeof samplesOf>, outcome: string) =>
        valueOf(samples, "mcp_worker_requests_total", {
          mcp_worker_server: server,
          mcp_worker_surface: "gateway",
          mcp_worker_outcome: outcome
        })
      const before = samplesOf(yield* endpoint.scrape)
      const host = yield* Layer.build(
        McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))
      )
      const workers = Context.get(host, McpWorkers)
      const serve = Context.get(host, McpServe.McpServe)
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ counter: { id, tools: ["echo"] } })
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "metrics-test", version: "1.0.0" })
          const headers = { Authorization: `Bearer ${grant}` }
          await client.connect(new StreamableHTTPClientTransport(new URL(serve.url!), { requestInit: { headers } }))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )
      yield* Effect.promise(() => client.callTool({ name: "counter__echo", arguments: { token: "g" } }))
      // A tool outside the grant: refused by the gateway itself, before the worker is asked.
      yield* Effect.promise(() => client.callTool({ name: "counter__inc", arguments: {} }).catch(() => undefined))
      const after = samplesOf(yield* endpoint.scrape)
      yield* workers.close(id)
      assert.deepStrictEqual(
        {
          results: count(after, "result") - count(before, "result"),
          refused: count(after, "InvalidInput") - count(before, "InvalidInput")
        },
        { results: 1, refused: 1 }
      )
    })
  )
})

describe("C82: the host's view is the host's own", () => {
  it.scopedLive("the service handed out beside it offers no way to it", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(NodeMcpWorkers.layerWithView())
      const service = Context.get(context, McpWorkers)
      const view = Context.get(context, HostView.HostView)
      assert.deepStrictEqual(yield* view.snapshot, [])
      for (const key of Object.keys(service)) assert.notInclude(["snapshot", "view"], key)
    })
  )
})
