// The HTTP transports under the owner core, in-process (no thread): Streamable HTTP and HTTP+SSE against the
// fixture servers, the published `server-everything` in Streamable HTTP mode, the SSE fallback, session expiry,
// session termination on close, and header secrets (C8–C15, C21, C24).
import { assert, describe, it } from "@effect/vitest"
import type { CleanupSummary, OpenFailed } from "@mcp-worker/core/McpWorkerError"
import * as Owner from "@mcp-worker/core/protocol/Owner"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import * as HttpTransport from "../../packages/node/src/internal/transport/streamableHttp.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { HttpFixture } from "../fixtures/servers.js"
import { everythingHttp as everything, freePort } from "../fixtures/everything.js"
import { startHttpFixture } from "../fixtures/servers.js"

type Posted = OwnerProtocol.OwnerMessageEncoded

interface Worker {
  readonly info: OwnerProtocol.OpenInfo
  /** Everything the owner posted to its host. */
  readonly posted: ReadonlyArray<Posted>
  /** Every message the client sent over the transport (reveals JSON-RPC ids). */
  readonly sent: ReadonlyArray<JSONRPCMessage>
  /** Sends one request and waits for its `Success` or `Failure`. */
  readonly request: (method: OwnerProtocol.Method, params: object) => Effect.Effect<Posted>
  /** Sends one request without waiting; returns its requestId. */
  readonly start: (method: OwnerProtocol.Method, params: object) => string
  readonly cancel: (requestId: string) => void
  readonly close: (budgetMs?: number) => Effect.Effect<CleanupSummary>
}

const fixture = (name: "http" | "sse", ...flags: Array<string>): Effect.Effect<HttpFixture, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startHttpFixture(name, ...flags)),
    (f) => Effect.promise(() => f.stop())
  )

/** Opens an owner over the HTTP transport; the scope closes it (before the fixture it uses stops). */
const openExit = (input: object) =>
  Effect.gen(function* () {
    const config = yield* Either.match(ServerConfig.normalize(input, process.env), {
      onLeft: (error) => Effect.die(error),
      onRight: Effect.succeed
    })
    const posted: Array<Posted> = []
    const sent: Array<JSONRPCMessage> = []
    const waiters = new Map<string, (message: Posted) => void>()
    const owner = Owner.make({
      port: {
        post: (message) => {
          posted.push(message)
          const requestId = "requestId" in message ? message.requestId : undefined
          if (requestId !== undefined) waiters.get(requestId)?.(message)
        }
      },
      factory: (cfg, context) =>
        Effect.map(HttpTransport.make(cfg as ServerConfig.HttpConfig, context), (owned) => {
          const send = owned.transport.send.bind(owned.transport)
          owned.transport.send = (message, options) => {
            sent.push(message)
            return send(message, options)
          }
          return owned
        })
    })
    const exit = yield* Effect.exit(
      owner.open(
        new OwnerProtocol.Open({
          workerId: WorkerId.make(),
          marker: "unused-for-http",
          config: ServerConfig.toWire(config),
          timeoutMs: 10_000
        })
      )
    )
    // Closing twice is harmless: tests that close on their own are closed again here.
    yield* Effect.addFinalizer(() => owner.close(3_000))
    const start = (method: OwnerProtocol.Method, params: object): string => {
      const requestId = WorkerId.makeRequestId()
      owner.onMessage({
        _tag: "Request",
        requestId,
        method,
        params: JSON.stringify(params),
        deadline: Date.now() + 10_000
      })
      return requestId
    }
    const wait = (requestId: string): Effect.Effect<Posted> =>
      Effect.async<Posted>((resume) => {
        const done = posted.find((message) => "requestId" in message && message.requestId === requestId)
        if (done !== undefined) return resume(Effect.succeed(done))
        waiters.set(requestId, (message) => resume(Effect.succeed(message)))
        return Effect.sync(() => waiters.delete(requestId))
      }).pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`no answer to ${requestId}`) }),
        Effect.orDie
      )
    return {
      exit,
      owner,
      worker: {
        info: Exit.isSuccess(exit)
          ? exit.value
          : { pid: null, era: null, protocolVersion: null, server: null, tasks: false },
        posted,
        sent,
        start,
        request: (method, params) => Effect.suspend(() => wait(start(method, params))),
        cancel: (requestId) => owner.onMessage({ _tag: "Cancel", requestId, reason: "cancelled" }),
        close: (budgetMs = 3_000) => owner.close(budgetMs)
      } satisfies Worker
    }
  })

/** Opens a worker that must open. */
const open = (input: object): Effect.Effect<Worker, never, Scope.Scope> =>
  Effect.flatMap(openExit(input), ({ exit, worker }) =>
    Exit.isSuccess(exit) ? Effect.succeed(worker) : Effect.die(new Error(`open failed: ${Cause.pretty(exit.cause)}`))
  )

/** Opens a worker that must fail to open; returns the failure. */
const openFailure = (input: object): Effect.Effect<OpenFailed, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { exit } = yield* openExit(input)
    assert.isTrue(Exit.isFailure(exit), "open succeeded")
    return Option.getOrThrow(Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none())
  })

const callTool = (worker: Worker, name: string, args: object = {}) =>
  worker.request("tools/call", { name, arguments: args })

const success = (message: Posted): Record<string, unknown> => {
  assert.strictEqual(message._tag, "Success", JSON.stringify(message))
  return JSON.parse((message as { result: string }).result) as Record<string, unknown>
}

const failure = (message: Posted): { _tag: string; kind?: string; code?: number; message: string } => {
  assert.strictEqual(message._tag, "Failure", JSON.stringify(message))
  return (message as { error: { _tag: string; kind?: string; code?: number; message: string } }).error
}

const until = <A>(what: string, check: () => Promise<A | undefined>, ms = 5_000): Effect.Effect<A> =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    for (;;) {
      const value = await check()
      if (value !== undefined) return value
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })

const sentCallId = (worker: Worker, token: string): string | number => {
  for (const message of worker.sent) {
    const m = message as { id?: string | number; method?: string; params?: { arguments?: { token?: unknown } } }
    if (m.method === "tools/call" && m.params?.arguments?.token === token && m.id !== undefined) return m.id
  }
  throw new Error(`no tools/call with token ${token} was sent`)
}

describe("HttpTransport (Streamable HTTP)", () => {
  it.scopedLive("opens: protocol version and server filled, no pid", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const worker = yield* open({ url: http.url })
      assert.isNull(worker.info.pid)
      assert.isString(worker.info.protocolVersion)
      assert.match(worker.info.protocolVersion!, /^\d{4}-\d{2}-\d{2}$/)
      assert.deepStrictEqual(worker.info.server, { name: "http-fixture", version: "1.0.0" })
      const log = yield* Effect.promise(() => http.log())
      assert.strictEqual(log.sessions.length, 1)
      assert.strictEqual(log.sessions[0]!.state, "open")
    })
  )

  it.scopedLive("lists and calls tools on one stateful session; isError is a success (C14)", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const worker = yield* open({ url: http.url })
      const listed = success(yield* worker.request("tools/list", {}))
      const names = (listed.tools as Array<{ name: string }>).map((tool) => tool.name)
      assert.includeMembers(names, ["inc", "echo", "sleep", "cancelled", "fail", "rpc_error", "structured"])
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc", { by: 2 })).structuredContent, { count: 3 })
      const structured = success(yield* callTool(worker, "structured"))
      assert.deepStrictEqual(structured.structuredContent, { a: 1, nested: { b: [1, null, ""] } })
      assert.deepStrictEqual(structured._meta, { "x-fixture": true })
      assert.strictEqual(structured.extraField, "kept")
      const failed = success(yield* callTool(worker, "fail"))
      assert.strictEqual(failed.isError, true)
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 4 })
      assert.isFalse(worker.posted.some((message) => message._tag === "Failed"))
    })
  )

  it.scopedLive("a JSON-RPC error is a ServerError and the connection stays ready", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const worker = yield* open({ url: http.url })
      const error = failure(yield* callTool(worker, "rpc_error", { code: -32050 }))
      assert.strictEqual(error._tag, "ServerError")
      assert.strictEqual(error.code, -32050)
      assert.include(error.message, "rpc error on purpose")
      assert.deepStrictEqual(success(yield* callTool(worker, "echo", { token: "after" })).structuredContent, {
        token: "after"
      })
    })
  )

  it.scopedLive("cancel: the server gets notifications/cancelled with the exact JSON-RPC id (C10, C12)", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const worker = yield* open({ url: http.url })
      const requestId = worker.start("tools/call", { name: "sleep", arguments: { ms: 20_000, token: "long" } })
      const log = yield* until("the sleep call to reach the server", async () => {
        const log = await http.log()
        return log.calls.some((call) => call.token === "long") ? log : undefined
      })
      const id = sentCallId(worker, "long")
      assert.strictEqual(log.calls.find((call) => call.token === "long")!.id, id)
      worker.cancel(requestId)
      yield* until("the cancellation to reach the server", async () =>
        (await http.log()).cancelled.length > 0 ? true : undefined
      )
      const seen = success(yield* callTool(worker, "cancelled")).structuredContent as {
        cancelled: Array<{ requestId: string | number | null; reason: string | null }>
        aborted: Array<{ requestId: string | number }>
      }
      assert.deepStrictEqual(
        seen.cancelled.map((c) => c.requestId),
        [id]
      )
      assert.deepStrictEqual(
        seen.aborted.map((a) => a.requestId),
        [id]
      )
      // The owner answers nothing for a cancelled request: the host already did.
      assert.isFalse(worker.posted.some((message) => "requestId" in message && message.requestId === requestId))
    })
  )

  it.scopedLive("close ends the session with DELETE (C21)", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const worker = yield* open({ url: http.url })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      const summary = yield* worker.close(3_000)
      assert.deepStrictEqual(
        { ...summary, durationMs: 0 },
        {
          activeProcesses: 0,
          signalled: { term: 0, kill: 0 },
          escaped: 0,
          durationMs: 0,
          sessionTerminated: true
        }
      )
      const log = yield* Effect.promise(() => http.log())
      assert.strictEqual(log.deletes.length, 1)
      assert.deepStrictEqual(log.deletes[0], { sessionId: log.sessions[0]!.id, status: 200 })
      assert.strictEqual(log.sessions[0]!.state, "deleted")
    })
  )

  it.scopedLive("DELETE answered 405: tolerated, sessionTerminated false; no stream outlives close", () =>
    Effect.gen(function* () {
      // The server keeps the session, so its streams stay open unless the client aborts them.
      const http = yield* fixture("http", "--no-delete")
      const sockets = () => process.getActiveResourcesInfo().filter((name) => name === "TCPSocketWrap").length
      const before = sockets()
      const worker = yield* open({ url: http.url })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      // A cancelled call's response stream stays open on the server (it never answers it), next to the GET stream.
      const requestId = worker.start("tools/call", { name: "sleep", arguments: { ms: 20_000, token: "open" } })
      yield* until("the sleep call to reach the server", async () =>
        (await http.log()).calls.some((call) => call.token === "open") ? true : undefined
      )
      worker.cancel(requestId)
      assert.isAbove(sockets(), before)
      const summary = yield* worker.close(3_000)
      assert.isFalse(summary.sessionTerminated)
      assert.strictEqual(summary.activeProcesses, 0)
      const log = yield* Effect.promise(() => http.log())
      assert.deepStrictEqual(
        log.deletes.map((d) => d.status),
        [405]
      )
      assert.strictEqual(log.sessions[0]!.state, "open")
      // Every request and stream was aborted by close: only idle pooled sockets (not ref'd) may remain.
      yield* until("the client's streams to end", async () => (sockets() <= before ? true : undefined), 1_000)
    })
  )

  it.scopedLive("an expired session fails the worker with session_expired; nothing re-initializes (C15)", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const { worker } = yield* openExit({ url: http.url })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      yield* Effect.promise(() => http.expire())
      const during = failure(yield* callTool(worker, "inc"))
      assert.strictEqual(during._tag, "WorkerFailed")
      assert.strictEqual(during.kind, "session_expired")
      const failed = worker.posted.filter((message) => message._tag === "Failed")
      assert.strictEqual(failed.length, 1)
      assert.strictEqual((failed[0] as { kind: string }).kind, "session_expired")
      assert.include((failed[0] as { message: string }).message, "404")
      const after = failure(yield* callTool(worker, "inc"))
      assert.deepStrictEqual(
        { tag: after._tag, kind: after.kind, delivery: (after as { delivery?: string }).delivery },
        { tag: "WorkerFailed", kind: "session_expired", delivery: "not_sent" }
      )
      const summary = yield* worker.close(3_000)
      assert.isFalse(summary.sessionTerminated)
      const log = yield* Effect.promise(() => http.log())
      // One session only, never a second initialize; nothing left to DELETE.
      assert.strictEqual(log.sessions.length, 1)
      assert.strictEqual(log.sessions[0]!.state, "expired")
      assert.strictEqual(worker.sent.filter((m) => (m as { method?: string }).method === "initialize").length, 1)
      assert.strictEqual(log.deletes.length, 0)
    })
  )

  it.scopedLive("a server that went away fails the worker with kind transport", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const { worker } = yield* openExit({ url: http.url })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      yield* Effect.promise(() => http.stop())
      const error = failure(yield* callTool(worker, "inc"))
      assert.strictEqual(error._tag, "WorkerFailed")
      assert.strictEqual(error.kind, "transport")
      const failed = worker.posted.find((message) => message._tag === "Failed") as { kind: string } | undefined
      assert.strictEqual(failed?.kind, "transport")
      const summary = yield* worker.close(3_000)
      assert.isFalse(summary.sessionTerminated)
    })
  )

  it.scopedLive("nothing listening: OpenFailed at stage connect", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(freePort)
      const error = yield* openFailure({ url: `http://127.0.0.1:${port}/mcp` })
      assert.strictEqual(error._tag, "OpenFailed")
      assert.strictEqual(error.stage, "connect")
      assert.include(error.message, "ECONNREFUSED")
    })
  )
})

describe("HttpTransport secrets (C24)", () => {
  it.scopedLive("a URL with user:password credentials is refused before anything is sent", () =>
    Effect.gen(function* () {
      const error = yield* openFailure({ url: "http://someone:PASSWORD-1234@127.0.0.1:9/mcp" })
      assert.strictEqual(error.stage, "connect")
      assert.include(error.message, "credentials")
      assert.notInclude(JSON.stringify(error), "PASSWORD-1234")
    })
  )

  it.scopedLive("header values reach the server but never a posted message, status or error", () =>
    Effect.gen(function* () {
      const http = yield* fixture("http")
      const canary = `CANARY-${randomUUID()}`
      const secret = `SECRET-${randomUUID()}`
      const input = { url: http.url, headers: { "x-canary": canary, authorization: `Bearer ${secret}` } }
      const first = yield* open(input)
      success(yield* first.request("tools/list", {}))
      success(yield* callTool(first, "echo", { token: "hello" }))
      failure(yield* callTool(first, "rpc_error"))
      const closed = yield* first.close(3_000)
      assert.isTrue(closed.sessionTerminated)
      const second = yield* open(input)
      yield* Effect.promise(() => http.expire())
      assert.strictEqual(failure(yield* callTool(second, "inc")).kind, "session_expired")
      const failedClose = yield* second.close(3_000)
      const log = yield* Effect.promise(() => http.log())
      // POSTs, the GET stream and the DELETE: every request carried both headers.
      assert.includeMembers(
        log.headers.map((h) => h.method),
        ["POST", "GET", "DELETE"]
      )
      for (const record of log.headers) {
        assert.strictEqual(record.canary, canary)
        assert.strictEqual(record.authorization, `Bearer ${secret}`)
      }
      const everything = JSON.stringify([first.info, first.posted, closed, second.info, second.posted, failedClose])
      assert.include(everything, "session_expired")
      assert.notInclude(everything, canary)
      assert.notInclude(everything, secret)
    })
  )

  it.scopedLive("an error body that echoes the headers is redacted in OpenFailed", () =>
    Effect.gen(function* () {
      const canary = `CANARY-${randomUUID()}`
      const secret = `SECRET-${randomUUID()}`
      // A server that answers every request with HTTP 400 and the request headers in the body.
      const url = yield* echoServer()
      for (const transport of ["streamable-http", undefined] as const) {
        const error = yield* openFailure({
          url,
          headers: { "x-canary": canary, authorization: `Bearer ${secret}` },
          ...(transport === undefined ? {} : { transport })
        })
        assert.strictEqual(error._tag, "OpenFailed")
        assert.strictEqual(error.stage, "connect")
        assert.include(error.message, "400")
        if (transport !== undefined) assert.include(error.message, "***")
        else assert.include(error.message, "SSE fallback failed")
        assert.notInclude(JSON.stringify(error), canary)
        assert.notInclude(JSON.stringify(error), secret)
      }
    })
  )
})

describe("HttpTransport (HTTP+SSE)", () => {
  it.scopedLive("transport sse: opens, calls, headers on the GET stream too, no session DELETE", () =>
    Effect.gen(function* () {
      const sse = yield* fixture("sse")
      const canary = `CANARY-${randomUUID()}`
      const { worker } = yield* openExit({ url: sse.url, transport: "sse", headers: { "x-canary": canary } })
      assert.deepStrictEqual(worker.info.server, { name: "sse-fixture", version: "1.0.0" })
      assert.isNull(worker.info.pid)
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 2 })
      assert.strictEqual(failure(yield* callTool(worker, "rpc_error"))._tag, "ServerError")
      const summary = yield* worker.close(3_000)
      assert.isNull(summary.sessionTerminated)
      const log = yield* Effect.promise(() => sse.log())
      assert.deepStrictEqual(log.headers[0], {
        method: "GET",
        path: "/sse",
        sessionId: null,
        canary,
        authorization: null
      })
      assert.isTrue(log.headers.every((h) => h.canary === canary))
      assert.isFalse(log.headers.some((h) => h.method === "POST" && h.path === "/sse"))
      assert.notInclude(JSON.stringify(worker.posted), canary)
    })
  )

  it.scopedLive("no transport given: Streamable HTTP is refused with 405, falls back to SSE", () =>
    Effect.gen(function* () {
      const sse = yield* fixture("sse")
      const worker = yield* open({ url: sse.url })
      assert.deepStrictEqual(worker.info.server, { name: "sse-fixture", version: "1.0.0" })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      const log = yield* Effect.promise(() => sse.log())
      assert.deepStrictEqual(
        log.headers.slice(0, 4).map((h) => `${h.method} ${h.path}`),
        // The era probe (server/discover, C51), refused as initialize is; then the fallback of the specification.
        ["POST /sse", "POST /sse", "GET /sse", "POST /messages"]
      )
      assert.strictEqual(log.sessions.length, 1)
      // The client sent initialize once; the transport re-sent it once over SSE after the refusal (the log's
      // POST /sse, then POST /messages). Nothing else is ever re-sent.
      assert.strictEqual(worker.sent.filter((m) => (m as { method?: string }).method === "initialize").length, 1)
    })
  )

  it.scopedLive("transport streamable-http never falls back: OpenFailed against an SSE-only server", () =>
    Effect.gen(function* () {
      const sse = yield* fixture("sse")
      const error = yield* openFailure({ url: sse.url, transport: "streamable-http" })
      assert.strictEqual(error._tag, "OpenFailed")
      assert.strictEqual(error.stage, "connect")
      assert.include(error.message, "405")
      const log = yield* Effect.promise(() => sse.log())
      assert.deepStrictEqual(
        log.headers.map((h) => `${h.method} ${h.path}`),
        // The era probe (server/discover, C51), then initialize; neither falls back.
        ["POST /sse", "POST /sse"]
      )
      assert.strictEqual(log.sessions.length, 0)
    })
  )

  it.scopedLive("a lost SSE stream fails the worker instead of opening a new session (C3)", () =>
    Effect.gen(function* () {
      const sse = yield* fixture("sse")
      const { worker } = yield* openExit({ url: sse.url, transport: "sse" })
      assert.deepStrictEqual(success(yield* callTool(worker, "inc")).structuredContent, { count: 1 })
      yield* Effect.promise(() => sse.expire())
      yield* until("the worker to fail", async () =>
        worker.posted.some((message) => message._tag === "Failed") ? true : undefined
      )
      const error = failure(yield* callTool(worker, "inc"))
      assert.strictEqual(error.kind, "transport")
      // Longer than the event source's 3 s reconnect delay would be; no second session ever appears.
      yield* Effect.sleep(Duration.millis(3_300))
      const log = yield* Effect.promise(() => sse.log())
      assert.strictEqual(log.sessions.length, 1)
      assert.isNull((yield* worker.close(3_000)).sessionTerminated)
    })
  )
})

// server-everything

const echoServer = (): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<http.Server>((resolve) => {
          const server = http.createServer((req, res) => {
            req.resume()
            res.writeHead(400, { "content-type": "text/plain" }).end(`bad request ${JSON.stringify(req.headers)}`)
          })
          server.listen(0, "127.0.0.1", () => resolve(server))
        })
    ),
    (server) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      )
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`))

describe("HttpTransport against the published server-everything", () => {
  it.scopedLive(
    "streamable HTTP: list, get-sum, get-structured-content unchanged vs the SDK client, close",
    () =>
      Effect.gen(function* () {
        const url = yield* everything()
        const direct = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new Client({ name: "direct", version: "1.0.0" })
            const transport = new StreamableHTTPClientTransport(new URL(url))
            await client.connect(transport)
            return { client, transport }
          }),
          ({ client, transport }) =>
            Effect.promise(async () => {
              await transport.terminateSession().catch(() => {})
              await client.close()
            })
        )
        const expected = yield* Effect.promise(() =>
          direct.client.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } })
        )

        const { worker } = yield* openExit({ url })
        assert.isNull(worker.info.pid)
        assert.isString(worker.info.protocolVersion)
        assert.isString(worker.info.server?.name)
        const tools = (success(yield* worker.request("tools/list", {})).tools as Array<{ name: string }>).map(
          (tool) => tool.name
        )
        assert.includeMembers(tools, ["get-sum", "get-structured-content", "echo"])
        const sum = success(yield* callTool(worker, "get-sum", { a: 2, b: 3 }))
        assert.deepStrictEqual(sum.content, [{ type: "text", text: "The sum of 2 and 3 is 5." }])
        const structured = success(yield* callTool(worker, "get-structured-content", { location: "Chicago" }))
        assert.deepStrictEqual(structured.structuredContent, expected.structuredContent)
        assert.deepStrictEqual(structured, JSON.parse(JSON.stringify(expected)))
        const summary = yield* worker.close(3_000)
        assert.isTrue(summary.sessionTerminated)
      }),
    60_000
  )
})
