// The owner without threads: one Owner over the SDK's in-memory transport, a real McpServer on the other end, and a
// queue in place of the host reading the data port. What the owner promises its host shows here: the open and its
// report, one request at a time with its raw result, the exact cancel the server is told of, notifications and
// progress handed on, a server's request answered by the host, and a close that leaves nothing.
import { assert, describe, it } from "@effect/vitest"
import { emptyCleanup, WorkerBusy, WorkerFailed } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as Owner from "@mcp-worker/core/protocol/Owner"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import { z } from "zod"

const workerId = "w_owner_test"

const config = Either.getOrThrow(ServerConfig.normalize({ command: "in-memory" }, {}))

/** The server side: tools that answer, hold until cancelled, report progress, and ask the client for its roots. */
const makeServer = (held: Deferred.Deferred<AbortSignal>) => {
  const server = new McpServer({ name: "owner-test", version: "1.2.3" }, { capabilities: { logging: {} } })
  server.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: "text" as const, text }],
    _meta: { note: "as the server sent it" }
  }))
  server.registerTool(
    "hold",
    {},
    (extra) =>
      new Promise((resolve) => {
        Deferred.unsafeDone(held, Effect.succeed(extra.signal))
        extra.signal.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "too late" }] }))
      })
  )
  server.registerTool("progress", {}, async (extra) => {
    const progressToken = extra._meta?.progressToken
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken, progress: 1, total: 2 }
      })
    }
    return { content: [{ type: "text", text: "done" }] }
  })
  server.registerTool("roots", {}, async () => {
    const { roots } = await server.server.listRoots()
    return { content: [{ type: "text", text: roots.map((root) => root.uri).join(",") }] }
  })
  return server
}

/**
 * One owner, opened on a linked pair, its posts in a queue. `seen` is every message that reached the server;
 * `stops` counts the transport's `stop`. The owner is closed when the scope ends.
 */
const setup = (options: { readonly handlers?: ReadonlyArray<"elicitation" | "sampling" | "roots"> } = {}) =>
  Effect.gen(function* () {
    const posted = yield* Queue.unbounded<OwnerProtocol.OwnerMessageEncoded>()
    const held = yield* Deferred.make<AbortSignal>()
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    const server = makeServer(held)
    const seen: Array<JSONRPCMessage> = []
    let serverClosed = false
    let stops = 0
    yield* Effect.promise(() => server.connect(serverTransport))
    const onServerMessage = serverTransport.onmessage
    serverTransport.onmessage = (message, extra) => {
      seen.push(message)
      onServerMessage?.(message, extra)
    }
    const onServerClose = serverTransport.onclose
    serverTransport.onclose = () => {
      serverClosed = true
      onServerClose?.()
    }
    const factory: Owner.TransportFactory = (_config, context) =>
      Effect.sync(() => {
        context.onSpawned(4242)
        return {
          transport: clientTransport,
          pid: null,
          stop: () =>
            Effect.sync(() => {
              stops++
              return emptyCleanup
            }),
          exitInfo: () => Effect.succeed({})
        }
      })
    const owner = Owner.make({ port: { post: (message) => Queue.unsafeOffer(posted, message) }, factory })
    yield* Effect.addFinalizer(() => owner.close(1_000))
    const open = new OwnerProtocol.Open({
      workerId,
      marker: "m_owner_test",
      config: ServerConfig.toWire(config),
      timeoutMs: 5_000,
      ...(options.handlers !== undefined ? { handlers: options.handlers } : {})
    })
    const next = Queue.take(posted).pipe(
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the owner posted nothing") })
    )
    return {
      owner,
      server,
      serverTransport,
      seen,
      held,
      posted,
      next,
      open: owner.open(open),
      serverClosed: () => serverClosed,
      stops: () => stops
    }
  })

const request = (requestId: string, method: OwnerProtocol.Method, params: object, extra: object = {}) => ({
  _tag: "Request",
  requestId,
  method,
  params: JSON.stringify(params),
  deadline: Date.now() + 5_000,
  ...extra
})

const callTool = (requestId: string, name: string, args: object = {}, extra: object = {}) =>
  request(requestId, "tools/call", { name, arguments: args }, extra)

/** The error of a posted `Failure`, decoded as the host decodes it. */
const failureOf = (message: OwnerProtocol.OwnerMessageEncoded) => {
  const decoded = Either.getOrThrow(OwnerProtocol.decodeOwnerMessage(message))
  assert.strictEqual(decoded._tag, "Failure")
  return (decoded as typeof OwnerProtocol.FailureMessage.Type).error
}

describe("Owner", () => {
  it("every method of the owner protocol is one entry of the operation table, with its result schema", () => {
    const methods = Object.values(Operations.requests).map((operation) => operation.method)
    // A task start is a tools/call too, told apart by its params: one method, two entries.
    assert.deepStrictEqual(
      methods.filter((method) => method === "tools/call"),
      ["tools/call", "tools/call"]
    )
    assert.deepStrictEqual([...new Set(methods)].sort(), [...OwnerProtocol.Method.literals].sort())
    for (const operation of Object.values(Operations.requests)) assert.isDefined(operation.result)
  })

  it.scopedLive("open: the server process is reported first, then what initialize settled", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      const info = yield* h.open
      assert.deepStrictEqual(yield* h.next, { _tag: "Spawned", pid: 4242 })
      assert.deepStrictEqual(info.server, { name: "owner-test", version: "1.2.3" })
      assert.isNull(info.pid)
      assert.isString(info.protocolVersion)
      // Asked for its era first (C51): a 1.x server does not know server/discover, so initialize follows.
      const methods = h.seen.slice(0, 2).map((message) => ("method" in message ? message.method : undefined))
      assert.deepStrictEqual(methods, ["server/discover", "initialize"])
      assert.strictEqual(info.era, "legacy")
      // No handlers, no capabilities: a server is never told of a feature nobody answers.
      assert.deepStrictEqual(h.server.server.getClientCapabilities(), {})
    })
  )

  it.scopedLive("a request before the open is refused, not sent", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      h.owner.onMessage(request("r0", "ping", {}))
      const error = failureOf(yield* h.next)
      assert.instanceOf(error, WorkerFailed)
      assert.strictEqual((error as WorkerFailed).delivery, "not_sent")
      assert.strictEqual(h.seen.length, 0)
    })
  )

  it.scopedLive("a request is answered with the server's result as JSON text, unchanged", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      h.owner.onMessage(callTool("r1", "echo", { text: "hello" }))
      const answer = yield* h.next
      assert.strictEqual(answer._tag, "Success")
      const success = answer as typeof OwnerProtocol.SuccessMessage.Encoded
      assert.strictEqual(success.requestId, "r1")
      assert.strictEqual(success.envelope, false)
      assert.deepStrictEqual(JSON.parse(success.result), {
        content: [{ type: "text", text: "hello" }],
        _meta: { note: "as the server sent it" }
      })
    })
  )

  it.scopedLive("a host in the owner's own thread takes the raw result as a value (postResult)", () =>
    Effect.gen(function* () {
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
      const server = makeServer(yield* Deferred.make<AbortSignal>())
      yield* Effect.promise(() => server.connect(serverTransport))
      const results = yield* Queue.unbounded<[string, unknown]>()
      const owner = Owner.make({
        port: { post: () => {}, postResult: (requestId, result) => Queue.unsafeOffer(results, [requestId, result]) },
        factory: () =>
          Effect.succeed({
            transport: clientTransport,
            pid: null,
            stop: () => Effect.succeed(emptyCleanup),
            exitInfo: () => Effect.succeed({})
          })
      })
      yield* Effect.addFinalizer(() => owner.close(1_000))
      yield* owner.open(
        new OwnerProtocol.Open({ workerId, marker: "m", config: ServerConfig.toWire(config), timeoutMs: 5_000 })
      )
      owner.onMessage(callTool("r1", "echo", { text: "as a value" }))
      const [requestId, result] = yield* Queue.take(results)
      assert.strictEqual(requestId, "r1")
      assert.deepStrictEqual((result as { content: unknown }).content, [{ type: "text", text: "as a value" }])
    })
  )

  it.scopedLive("one request at a time: the next is refused as busy with the one in flight, and not sent", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      h.owner.onMessage(callTool("r1", "hold"))
      h.owner.onMessage(request("r2", "ping", {}))
      const error = failureOf(yield* h.next)
      assert.instanceOf(error, WorkerBusy)
      assert.strictEqual((error as WorkerBusy).requestId, "r1")
      assert.strictEqual((error as WorkerBusy).delivery, "not_sent")
      yield* Deferred.await(h.held)
      assert.isFalse(h.seen.some((message) => "method" in message && message.method === "ping"))
    })
  )

  it.scopedLive("cancel ends exactly the request it names, and the server is told (notifications/cancelled)", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      h.owner.onMessage(callTool("r1", "hold"))
      const signal = yield* Deferred.await(h.held)
      // Another id changes nothing.
      h.owner.onMessage({ _tag: "Cancel", requestId: "r9", reason: "cancelled", confirm: true })
      assert.deepStrictEqual(yield* h.next, { _tag: "CancelAnswer", requestId: "r9", cancelled: false })
      assert.isFalse(signal.aborted)
      h.owner.onMessage({ _tag: "Cancel", requestId: "r1", reason: "cancelled", confirm: true })
      assert.deepStrictEqual(yield* h.next, { _tag: "CancelAnswer", requestId: "r1", cancelled: true })
      yield* Effect.async<void>((resume) => {
        if (signal.aborted) return resume(Effect.void)
        signal.addEventListener("abort", () => resume(Effect.void))
      })
      const call = h.seen.find((message) => "method" in message && message.method === "tools/call")
      const cancelled = h.seen.flatMap((message) =>
        "method" in message && message.method === "notifications/cancelled" ? [message.params] : []
      )
      assert.isDefined(call)
      assert.strictEqual(cancelled.length, 1)
      assert.strictEqual(cancelled[0]?.requestId, (call as { id: unknown }).id)
      // The cancelled request's late outcome is dropped: the next thing posted is the next request's answer.
      h.owner.onMessage(request("r2", "ping", {}))
      const answer = yield* h.next
      assert.strictEqual(answer._tag, "Success")
      assert.strictEqual((answer as { requestId: string }).requestId, "r2")
    })
  )

  it.scopedLive("notifications are handed on, and progress reaches the request that asked for it", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      yield* Effect.promise(() => h.server.server.sendToolListChanged())
      assert.deepStrictEqual(yield* h.next, {
        _tag: "Notification",
        method: "notifications/tools/list_changed",
        params: "{}"
      })
      yield* Effect.promise(() => h.server.server.sendLoggingMessage({ level: "info", data: "hi" }))
      const log = yield* h.next
      assert.strictEqual(log._tag, "Notification")
      assert.deepStrictEqual(JSON.parse((log as { params: string }).params), { level: "info", data: "hi" })
      h.owner.onMessage(callTool("r1", "progress", {}, { progress: true }))
      assert.deepStrictEqual(yield* h.next, { _tag: "Progress", requestId: "r1", progress: { progress: 1, total: 2 } })
      assert.strictEqual((yield* h.next)._tag, "Success")
      // Without asking, no progress token is sent, and none comes back.
      h.owner.onMessage(callTool("r2", "progress"))
      assert.strictEqual((yield* h.next)._tag, "Success")
    })
  )

  it.scopedLive("a server's request goes to the host, and the host's answer goes back to the server", () =>
    Effect.gen(function* () {
      const h = yield* setup({ handlers: ["roots"] })
      yield* h.open
      yield* h.next // Spawned
      assert.deepStrictEqual(h.server.server.getClientCapabilities(), { roots: {} })
      h.owner.onMessage(callTool("r1", "roots"))
      const asked = yield* h.next
      assert.strictEqual(asked._tag, "ServerRequest")
      const { method, requestId, serverRequestId } = asked as typeof OwnerProtocol.ServerRequestMessage.Encoded
      assert.strictEqual(method, "roots/list")
      // C151: the question names the request in flight it was asked during.
      assert.strictEqual(requestId, "r1")
      h.owner.onMessage({
        _tag: "ServerReply",
        serverRequestId,
        result: JSON.stringify({ roots: [{ uri: "file:///work", name: "work" }] })
      })
      const answer = yield* h.next
      assert.strictEqual(answer._tag, "Success")
      const result = JSON.parse((answer as { result: string }).result)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "file:///work" }])
    })
  )

  it.scopedLive("a connection that dies is reported once, and its requests are refused with that failure", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      yield* Effect.promise(() => h.serverTransport.close())
      const failed = yield* h.next
      assert.strictEqual(failed._tag, "Failed")
      assert.strictEqual((failed as { kind: string }).kind, "transport")
      h.owner.onMessage(request("r1", "ping", {}))
      const error = failureOf(yield* h.next)
      assert.instanceOf(error, WorkerFailed)
      assert.strictEqual((error as WorkerFailed).kind, "transport")
      assert.strictEqual((error as WorkerFailed).delivery, "not_sent")
    })
  )

  it.scopedLive("close ends the connection and the transport, quietly, and a closed owner sends nothing", () =>
    Effect.gen(function* () {
      const h = yield* setup()
      yield* h.open
      yield* h.next // Spawned
      const cleanup = yield* h.owner.close(1_000)
      assert.deepStrictEqual(cleanup, emptyCleanup)
      assert.strictEqual(h.stops(), 1)
      assert.isTrue(h.serverClosed())
      // A close is not a failure of the connection: nothing is reported.
      assert.strictEqual(yield* Queue.size(h.posted), 0)
      const sent = h.seen.length
      h.owner.onMessage(request("r1", "ping", {}))
      const error = failureOf(yield* h.next)
      assert.instanceOf(error, WorkerFailed)
      assert.strictEqual((error as WorkerFailed).delivery, "not_sent")
      assert.strictEqual(h.seen.length, sent)
      // Closing again is harmless.
      yield* h.owner.close(1_000)
    })
  )
})
