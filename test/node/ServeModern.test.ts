// The gateway to MCP 2026-07-28 clients: the v2 client, negotiating, reaches the same workers statelessly on the
// endpoint where 2025-11-25 clients hold sessions; the same tools, errors, cancels and progress.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import * as V2 from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import {
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/server"
import fc from "fast-check"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { plainlyLegacy } from "../../packages/node/src/internal/serve/modern.js"
import { fixturePath, statefulConfig } from "../fixtures/servers.js"

const { version } = JSON.parse(
  fs.readFileSync(fileURLToPath(new URL("../../packages/node/package.json", import.meta.url)), "utf8")
) as { version: string }

const layer = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))

/** A v2 client of the gateway that settled on 2026-07-28; closed with the scope. */
const modernClient = (url: string, grant: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new V2.Client({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new V2.StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** A 2025-11-25 session of the gateway; closed with the scope. */
const legacyClient = (url: string, grant: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "legacy", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const rejected = (call: Promise<unknown>) =>
  Effect.promise(() =>
    call.then(
      () => assert.fail("the call succeeded"),
      (error: { code?: number; data?: Record<string, unknown> }) => error
    )
  )

describe("McpServe on 2026-07-28", () => {
  it.scopedLive("C148: a 2026-07-28 client and a 2025-11-25 session share one worker on one endpoint", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ w: { id, tools: ["inc", "structured", "sleep"] } })
      const modern = yield* modernClient(serve.url!, grant)
      assert.strictEqual(modern.getProtocolEra(), "modern")
      const legacy = new Client({ name: "legacy", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      yield* Effect.acquireRelease(
        Effect.promise(() =>
          legacy.connect(new StreamableHTTPClientTransport(new URL(serve.url!), { requestInit: { headers } }))
        ),
        () => Effect.promise(() => legacy.close())
      )
      const listed = yield* Effect.promise(() => modern.listTools())
      assert.deepStrictEqual(listed.tools.map((tool) => tool.name).sort(), ["w__inc", "w__sleep", "w__structured"])
      // The same tools; `execution` is a 2025-11-25 member, which the 2026-07-28 schema does not carry.
      const sessionTools = (yield* Effect.promise(() => legacy.listTools())).tools.map(
        ({ execution: _, ...tool }) => tool
      )
      assert.deepStrictEqual(listed.tools, sessionTools as never)
      const first = yield* Effect.promise(() => modern.callTool({ name: "w__inc", arguments: {} }))
      const second = yield* Effect.promise(() => legacy.callTool({ name: "w__inc", arguments: {} }))
      assert.deepStrictEqual([first.structuredContent, second.structuredContent], [{ count: 1 }, { count: 2 }])
      const served = yield* Effect.promise(() => modern.callTool({ name: "w__structured", arguments: {} }))
      // The result unchanged (C132); the 2026-07-28 SDK names the server answering in every result's `_meta`.
      const { "io.modelcontextprotocol/serverInfo": serverInfo, ...meta } = served._meta ?? {}
      assert.deepStrictEqual(serverInfo, { name: "mcp-worker", version: version })
      assert.deepStrictEqual<unknown>({ ...served, _meta: meta }, yield* workers.callTool(id, "structured"))
      // C132: the same typed error, with its delivery, as a session gets.
      const refused = yield* rejected(modern.callTool({ name: "w__info", arguments: {} }))
      assert.deepStrictEqual(
        [refused.code, refused.data?._tag, refused.data?.delivery],
        [-32602, "InvalidInput", "not_sent"]
      )
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C148: without a grant that holds, a 2026-07-28 request is 401 and reaches nothing", () =>
    Effect.gen(function* () {
      const serve = yield* McpServe.McpServe
      const client = new V2.Client({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
      const headers = { Authorization: "Bearer forged" }
      const failed = yield* Effect.promise(() =>
        client.connect(new V2.StreamableHTTPClientTransport(new URL(serve.url!), { requestInit: { headers } })).then(
          () => assert.fail("connected"),
          (error: Error) => error
        )
      )
      const data = (failed as { data?: { status?: number; text?: string } }).data
      assert.strictEqual(data?.status, 401)
      assert.include(data?.text, "a grant that holds is required")
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C148: a 2026-07-28 client's abort ends its request at the worker's server, and progress flows", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ w: id })
      const modern = yield* modernClient(serve.url!, grant)
      const abort = new AbortController()
      const call = rejected(
        modern.callTool({ name: "w__sleep", arguments: { ms: 60_000 } }, { signal: abort.signal, timeout: 120_000 })
      )
      const fork = yield* Effect.fork(call)
      yield* workers
        .status(id)
        .pipe(
          Effect.repeat({ until: (status) => status.busy, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("20 seconds")
        )
      abort.abort()
      yield* fork.await
      yield* workers
        .status(id)
        .pipe(
          Effect.repeat({ until: (status) => !status.busy, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("20 seconds")
        )
      // C135: the worker's server saw its request aborted.
      const abortedAt = (result: { structuredContent?: unknown }) =>
        (result.structuredContent as { aborted: Array<unknown> }).aborted.length
      yield* workers.callTool(id, "cancelled").pipe(
        Effect.filterOrFail((result) => abortedAt(result) === 1),
        Effect.retry({ schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("20 seconds")
      )
      const steps: Array<number> = []
      yield* Effect.promise(() =>
        modern.callTool(
          { name: "w__progress", arguments: { steps: 3 } },
          { onprogress: (progress: { progress: number }) => void steps.push(progress.progress) }
        )
      )
      assert.deepStrictEqual(steps, [1, 2, 3])
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C161: what the gateway declares is what its grant's workers serve, in either era", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const toolsOnly = yield* workers.open(statefulConfig("--tools-only"))
      const everything = yield* workers.open(statefulConfig())
      const capabilitiesOf = (grant: string) =>
        Effect.gen(function* () {
          const modern = yield* modernClient(serve.url!, grant)
          const legacy = yield* legacyClient(serve.url!, grant)
          return [modern.getServerCapabilities(), legacy.getServerCapabilities(), legacy] as const
        })
      const [modernTools, legacyTools, legacy] = yield* capabilitiesOf(yield* serve.grant({ t: toolsOnly }))
      assert.deepStrictEqual(modernTools, { tools: { listChanged: true } })
      assert.deepStrictEqual(legacyTools, modernTools)
      // What is not declared has no handler: the SDK's own "method not found", and no worker reached.
      const refused = yield* rejected(legacy.listPrompts())
      assert.strictEqual(refused.code, -32601)
      const [modernAll, legacyAll] = yield* capabilitiesOf(yield* serve.grant({ t: toolsOnly, e: everything }))
      assert.deepStrictEqual(modernAll, {
        tools: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        prompts: { listChanged: true },
        completions: {}
      })
      assert.deepStrictEqual(legacyAll, modernAll)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C162, C164: a 2026-07-28 client reads, gets and completes as a session does; a listened URI is subscribed",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open(statefulConfig())
        const toolsOnly = yield* workers.open(statefulConfig("--tools-only"))
        const grant = yield* serve.grant({ w: id, t: toolsOnly })
        const modern = yield* modernClient(serve.url!, grant)
        const legacy = yield* legacyClient(serve.url!, grant)
        // The same handlers: the same answers, but for what the 2026-07-28 SDK adds (C148): serverInfo in every result,
        // and to a list or a read the caching hints that say it is the grant's own and not to be kept.
        const same = <A>(request: (client: V2.Client | Client) => Promise<A>) =>
          Effect.promise(async () => {
            const { _meta, cacheScope, ttlMs, ...answer } = (await request(modern)) as Record<string, unknown>
            const { "io.modelcontextprotocol/serverInfo": _, ...meta } = (_meta ?? {}) as Record<string, unknown>
            const expected = (await request(legacy)) as Record<string, unknown>
            assert.deepStrictEqual({ ...answer, ...(Object.keys(meta).length > 0 && { _meta: meta }) }, expected)
            // A list and a read carry them; the rest carry none.
            const cached = ["resources", "resourceTemplates", "prompts", "contents"].some((key) => key in expected)
            assert.deepStrictEqual([cacheScope, ttlMs], cached ? ["private", 0] : [undefined, undefined])
            return expected
          })
        const listed = yield* same((client) => client.listResources())
        assert.include(JSON.stringify(listed), "memo://count")
        yield* same((client) => client.listResourceTemplates())
        yield* same((client) => client.readResource({ uri: "note://alpha" }))
        yield* same((client) => client.listPrompts())
        yield* same((client) => client.getPrompt({ name: "w__greet", arguments: { name: "Ada" } }))
        const completed = yield* same((client) =>
          client.complete({ ref: { type: "ref/prompt", name: "w__greet" }, argument: { name: "name", value: "A" } })
        )
        assert.deepStrictEqual((completed as { completion: { values: Array<string> } }).completion.values, [
          "Ada",
          "Alan"
        ])
        // C164: a URI a listen names is subscribed at the worker that serves it before the stream opens.
        const subscription = yield* Effect.acquireRelease(
          Effect.promise(() => modern.listen({ resourceSubscriptions: ["memo://count"] })),
          (subscription) => Effect.promise(() => subscription.close())
        )
        assert.deepStrictEqual(subscription.honoredFilter, { resourceSubscriptions: ["memo://count"] })
        const subscribed = yield* workers.callTool(id, "subscribed")
        assert.deepStrictEqual(subscribed.structuredContent, { subscribed: ["memo://count"] })
        // A URI no worker of the grant serves refuses the listen unsent, as a read of it is (C142).
        const refused = yield* rejected(modern.listen({ resourceSubscriptions: ["nowhere://x"] }))
        assert.deepStrictEqual(
          [refused.code, refused.data?._tag, refused.data?.path, refused.data?.delivery],
          [-32602, "InvalidInput", "uri", "not_sent"]
        )
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C163: a listen hears its own grant's changes and updates, and all three lists of a worker that ends",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const changing = { command: process.execPath, args: [fixturePath("conformance"), "--with-changes"] }
        const first = yield* workers.open(changing)
        const second = yield* workers.open(changing)
        const listening = (grant: string) =>
          Effect.gen(function* () {
            const client = yield* modernClient(serve.url!, grant)
            const heard = yield* Queue.unbounded<string>()
            for (const method of [
              "notifications/tools/list_changed",
              "notifications/prompts/list_changed",
              "notifications/resources/list_changed",
              "notifications/resources/updated"
            ] as const) {
              client.setNotificationHandler(method, () => void Queue.unsafeOffer(heard, method))
            }
            yield* Effect.acquireRelease(
              Effect.promise(() =>
                client.listen({
                  toolsListChanged: true,
                  promptsListChanged: true,
                  resourcesListChanged: true,
                  resourceSubscriptions: ["test://watched-resource"]
                })
              ),
              (subscription) => Effect.promise(() => subscription.close())
            )
            return [client, heard] as const
          })
        const [one, heardOne] = yield* listening(yield* serve.grant({ w: first }))
        const [two, heardTwo] = yield* listening(yield* serve.grant({ v: second }))
        yield* Effect.promise(() => one.callTool({ name: "w__add_prompt", arguments: {} }))
        assert.strictEqual(yield* Queue.take(heardOne), "notifications/prompts/list_changed")
        const prompts = yield* Effect.promise(() => one.listPrompts())
        assert.include(
          prompts.prompts.map((prompt) => prompt.name),
          "w__added_prompt"
        )
        // The first change was published before this one was made: a stream of the other grant would have it first.
        yield* Effect.promise(() => two.callTool({ name: "v__touch_watched", arguments: {} }))
        assert.strictEqual(yield* Queue.take(heardTwo), "notifications/resources/updated")
        yield* workers.close(first)
        const ended = yield* Effect.all([Queue.take(heardOne), Queue.take(heardOne), Queue.take(heardOne)])
        assert.deepStrictEqual(ended.sort(), [
          "notifications/prompts/list_changed",
          "notifications/resources/list_changed",
          "notifications/tools/list_changed"
        ])
      }).pipe(Effect.provide(layer))
  )

  // C148: the gateway's quick verdict on a 2025-11-25 request is the SDK's own, or it asks the SDK.
  it("C148: a request the gateway takes for 2025-11-25 without the SDK, the SDK classifies so too", () => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "w__echo", arguments: {} } }
    assert.isTrue(plainlyLegacy("2025-11-25", call))
    assert.isTrue(plainlyLegacy(undefined, call))
    const version = fc.option(
      fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, "2026-07-28", "2099-01-01", " 2025-11-25", "")
    )
    const meta = fc.option(
      fc.dictionary(
        fc.constantFrom(PROTOCOL_VERSION_META_KEY, "progressToken", "io.modelcontextprotocol/clientInfo", "x"),
        fc.oneof(fc.constantFrom("2026-07-28", "2025-11-25"), fc.integer(), fc.object())
      ),
      { nil: undefined }
    )
    const body = fc.oneof(
      fc.record(
        {
          jsonrpc: fc.constantFrom("2.0", "1.0"),
          id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          method: fc.oneof(fc.constantFrom("tools/call", "initialize", "notifications/initialized"), fc.integer()),
          params: fc.oneof(fc.record({ name: fc.string(), _meta: meta }, { requiredKeys: [] }), fc.array(fc.integer())),
          result: fc.object()
        },
        { requiredKeys: ["jsonrpc"] }
      ),
      fc.array(fc.object(), { maxLength: 2 }),
      fc.jsonValue()
    )
    fc.assert(
      fc.property(version, body, (version, body) => {
        if (!plainlyLegacy(version ?? undefined, body)) return
        const header = version === null ? {} : { protocolVersionHeader: version }
        assert.strictEqual(classifyInboundRequest({ httpMethod: "POST", ...header, body }).kind, "legacy")
      }),
      { numRuns: 2000 }
    )
  })
})
