// The gateway: real MCP SDK clients over streamable HTTP reach one stateful fixture worker through bearer grants.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, McpGrants, McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import * as V2 from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import { statefulConfig } from "../fixtures/servers.js"
import { socketPath } from "./listenSandbox.js"

const layer = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))

/** An MCP SDK client of the gateway at `url`, presenting `grant`; closed with the scope. */
const connect = (url: string, grant: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const headers: Record<string, string> = grant === undefined ? {} : { Authorization: `Bearer ${grant}` }
      const client = new Client({ name: "serve-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** What a rejected MCP call carried: its code and its data. */
const rejection = (promise: () => Promise<unknown>) =>
  Effect.promise(() =>
    promise().then(
      () => assert.fail("the call succeeded"),
      (error: unknown) => {
        assert.instanceOf(error, McpError)
        return { code: (error as McpError).code, data: (error as McpError).data as Record<string, unknown> }
      }
    )
  )

const toolNames = (client: Client) =>
  Effect.promise(() => client.listTools()).pipe(Effect.map((list) => list.tools.map((tool) => tool.name).sort()))

/** Waits until the worker is (or is no longer) busy: the host's own record, read until it says so. */
const untilBusy = (id: string, busy: boolean) =>
  Effect.flatMap(McpWorkers, (workers) =>
    workers
      .status(id)
      .pipe(
        Effect.repeat({ until: (status) => status.busy === busy, schedule: Schedule.spaced("10 millis") }),
        Effect.timeout("20 seconds")
      )
  )

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

const post = (url: string, headers: Record<string, string>, body: string) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body
    })
  )

describe("McpServe", () => {
  it.scopedLive(
    "C130, C131: two clients with different grants share one stateful worker and see only what they were granted",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open(statefulConfig())
        const all = yield* serve.grant({ counter: id })
        const narrow = yield* serve.grant({ counter: { id, tools: ["inc", "echo"] } })
        const a = yield* connect(serve.url!, all)
        const b = yield* connect(serve.url!, narrow)

        const aTools = yield* toolNames(a)
        assert.include(aTools, "counter__sleep")
        assert.include(aTools, "counter__structured")
        assert.deepStrictEqual(yield* toolNames(b), ["counter__echo", "counter__inc"])
        const listed = (yield* Effect.promise(() => b.listTools())).tools.find((tool) => tool.name === "counter__inc")
        const own = (yield* workers.listTools(id)).tools.find((tool) => tool.name === "inc")
        assert.deepStrictEqual<unknown>(listed, { ...own, name: "counter__inc" })

        // One worker, one counter: each client's call reaches the same live server.
        const first = yield* Effect.promise(() => a.callTool({ name: "counter__inc", arguments: {} }))
        const second = yield* Effect.promise(() => b.callTool({ name: "counter__inc", arguments: {} }))
        assert.deepStrictEqual([first.structuredContent, second.structuredContent], [{ count: 1 }, { count: 2 }])

        const refused = yield* rejection(() => b.callTool({ name: "counter__sleep", arguments: { ms: 1 } }))
        assert.strictEqual(refused.code, -32602)
        assert.strictEqual(refused.data._tag, "InvalidInput")
        assert.strictEqual(refused.data.delivery, "not_sent")
        const task = yield* rejection(() =>
          a.request(
            { method: "tools/call", params: { name: "counter__inc", arguments: {}, task: { ttl: 60_000 } } },
            CallToolResultSchema
          )
        )
        // The gateway declares no tasks: the SDK's server refuses a task-augmented call before any handler runs.
        assert.strictEqual(task.code, -32603)
        const unknown = yield* rejection(() => a.callTool({ name: "other__inc", arguments: {} }))
        assert.deepStrictEqual(
          [unknown.data._tag, unknown.data.path, unknown.data.delivery],
          ["InvalidInput", "name", "not_sent"]
        )
        // Nothing refused reached the server: it saw the two increments and no sleep.
        const calls = yield* workers.callTool(id, "calls")
        const names = (calls.structuredContent as { calls: Array<{ name: string }> }).calls.map((call) => call.name)
        assert.deepStrictEqual(names, ["inc", "inc", "calls"])
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C132: a result passes through unchanged, isError and _meta included", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const client = yield* connect(serve.url!, yield* serve.grant({ w: id }))
      for (const tool of ["structured", "fail"]) {
        const direct = yield* workers.callTool(id, tool)
        const served = yield* Effect.promise(() => client.callTool({ name: `w__${tool}`, arguments: {} }))
        assert.deepStrictEqual<unknown>(served, direct)
      }
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C134: no grant, a forged one, a revoked one and an expired one are 401, and nothing is listed", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ w: id })
      const forged = grant.slice(0, -2) + (grant.endsWith("AA") ? "BB" : "AA")
      const body = JSON.stringify(initialize)
      for (const headers of [{}, { authorization: `Bearer ${forged}` }, { authorization: "Basic x" }]) {
        const response = yield* post(serve.url!, headers, body)
        assert.strictEqual(response.status, 401)
        assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/)
        yield* Effect.promise(() => response.text())
      }
      const client = yield* connect(serve.url!, grant)
      assert.deepStrictEqual((yield* toolNames(client)).includes("w__inc"), true)
      yield* serve.revoke(grant)
      const after = yield* Effect.promise(() =>
        client.listTools().then(
          () => "listed",
          (error: Error & { code?: number }) => `${error.code} ${error.message}`
        )
      )
      assert.match(after, /^401 /)
      const fresh = yield* post(serve.url!, { authorization: `Bearer ${grant}` }, body)
      assert.strictEqual(fresh.status, 401)
      yield* Effect.promise(() => fresh.text())
      // A grant past its ttl is refused as a revoked one is.
      const brief = yield* serve.grant({ w: id }, { ttl: "1 second" })
      const early = yield* post(serve.url!, { authorization: `Bearer ${brief}` }, body)
      assert.strictEqual(early.status, 200)
      yield* Effect.promise(() => early.text())
      yield* Effect.sleep("1100 millis")
      const expired = yield* post(serve.url!, { authorization: `Bearer ${brief}` }, body)
      assert.strictEqual(expired.status, 401)
      yield* Effect.promise(() => expired.text())
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C132, C135, C136: a client's cancel reaches the server; busy and unknown arrive with their delivery; progress flows",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open({ ...statefulConfig(), timeoutMs: 1_000 })
        const a = yield* connect(serve.url!, yield* serve.grant({ w: id }))
        const b = yield* connect(serve.url!, yield* serve.grant({ w: id }))

        const abort = new AbortController()
        const sleeping = a.callTool({ name: "w__sleep", arguments: { ms: 30_000 } }, undefined, {
          signal: abort.signal,
          timeout: 60_000
        })
        sleeping.catch(() => undefined)
        yield* untilBusy(id, true)
        const busy = yield* rejection(() => b.callTool({ name: "w__inc", arguments: {} }))
        assert.deepStrictEqual(
          [busy.data._tag, busy.data.delivery, busy.data.workerId, busy.data.requestId],
          ["WorkerBusy", "not_sent", "w", ""]
        )
        abort.abort()
        yield* untilBusy(id, false)
        const cancelled = yield* workers.callTool(id, "cancelled")
        assert.strictEqual((cancelled.structuredContent as { aborted: Array<unknown> }).aborted.length, 1)

        // The worker's budget passes: the request was sent, its outcome is unknown, and it is said so.
        const late = yield* rejection(() => b.callTool({ name: "w__sleep", arguments: { ms: 10_000 } }))
        assert.deepStrictEqual(
          [late.data._tag, late.data.delivery, late.data.reason],
          ["DeliveryUnknown", "unknown", "timeout"]
        )

        const progress: Array<number> = []
        const done = yield* Effect.promise(() =>
          a.callTool({ name: "w__progress", arguments: { steps: 3 } }, undefined, {
            onprogress: (event) => void progress.push(event.progress)
          })
        )
        assert.deepStrictEqual(progress, [1, 2, 3])
        assert.deepStrictEqual(done.structuredContent, { steps: 3, hadToken: true })
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C139: a worker's changed list, and a worker that ends, are announced as tools/list_changed", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const other = yield* workers.open(statefulConfig())
      const client = yield* connect(serve.url!, yield* serve.grant({ w: id, v: other }))
      const changes = yield* Queue.unbounded<void>()
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void Queue.unsafeOffer(changes, undefined))
      assert.notInclude(yield* toolNames(client), "w__fresh")
      yield* Effect.promise(() => client.callTool({ name: "w__add_tools", arguments: { names: ["fresh"] } }))
      yield* Queue.take(changes)
      assert.include(yield* toolNames(client), "w__fresh")
      yield* workers.close(other)
      yield* Queue.take(changes)
      const names = yield* toolNames(client)
      assert.isFalse(names.some((name) => name.startsWith("v__")))
      assert.include(names, "w__fresh")
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C130: the 2.x client (@modelcontextprotocol/client) negotiates, lists, calls and reads delivery", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ w: { id, tools: ["inc", "structured"] } })
      // Its 2025-11-25 face: negotiating, it would settle on 2026-07-28 (C148, ServeModern.test.ts).
      const client = new V2.Client({ name: "v2", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } })
      const headers = { Authorization: `Bearer ${grant}` }
      yield* Effect.acquireRelease(
        Effect.promise(() =>
          client.connect(new V2.StreamableHTTPClientTransport(new URL(serve.url!), { requestInit: { headers } }))
        ),
        () => Effect.promise(() => client.close())
      )
      assert.strictEqual(client.getProtocolEra(), "legacy")
      const listed = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(listed.tools.map((tool) => tool.name).sort(), ["w__inc", "w__structured"])
      const served = yield* Effect.promise(() => client.callTool({ name: "w__structured", arguments: {} }))
      assert.deepStrictEqual<unknown>(served, yield* workers.callTool(id, "structured"))
      const refused = yield* Effect.promise(() =>
        client.callTool({ name: "w__sleep", arguments: { ms: 1 } }).then(
          () => assert.fail("the call succeeded"),
          (error: { code?: number; data?: Record<string, unknown> }) => error
        )
      )
      assert.deepStrictEqual(
        [refused.code, refused.data?._tag, refused.data?.delivery],
        [-32602, "InvalidInput", "not_sent"]
      )
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C130: on a listening host the gateway and the socket plane reach the same worker (C118)", () => {
    const socket = socketPath()
    return Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const grants = yield* McpGrants.McpGrants
      const id = yield* workers.open(statefulConfig())
      const client = yield* connect(serve.url!, yield* serve.grant({ w: id }))
      const mcp = yield* Effect.acquireRelease(
        Effect.sync(() => makePromiseClient({ connect: socket.path })),
        (mcp) => Effect.promise(() => mcp.dispose())
      )
      const served = yield* Effect.promise(() => client.callTool({ name: "w__inc", arguments: {} }))
      const grant = yield* grants.grant(id)
      const bySocket = yield* Effect.promise(() => mcp.callTool(grant, "inc"))
      assert.deepStrictEqual([served.structuredContent, bySocket.structuredContent], [{ count: 1 }, { count: 2 }])
    }).pipe(
      Effect.provide(
        McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerListen({ path: socket.path })))
      ),
      Effect.ensuring(Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
    )
  })
})
