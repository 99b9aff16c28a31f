// A worker's elicitation and sampling during a gateway call go to the MCP client that made the call when it declared
// the capability, else to the host's handlers; one host and gateway for the file, real conformance fixture workers.
import { assert, it as plain, layer } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import * as V2 from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type ElicitResult
} from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { fixturePath } from "../fixtures/servers.js"
import { modernPost } from "./helpers.js"

const config = { command: process.execPath, args: [fixturePath("conformance")] }

/** The questions the host's handlers answered, by method, in order. */
const hostAsked: Array<string> = []
const handlers: NodeMcpWorkers.Handlers = {
  elicitation: ({ method }) => Effect.sync(() => hostAsked.push(method)).pipe(Effect.as({ action: "decline" })),
  sampling: ({ method }) =>
    Effect.sync(() => hostAsked.push(method)).pipe(
      Effect.as({
        role: "assistant",
        content: { type: "text", text: "the host" },
        model: "host",
        stopReason: "endTurn"
      })
    )
}
const hostLayer = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView({ handlers })))

type Answer = (request: { params: Record<string, unknown> }, extra: { signal: AbortSignal }) => Promise<ElicitResult>

/** A 2025-11-25 client of the gateway presenting `grant`: it declares elicitation and sampling when it answers. */
const connect = (url: string, grant: string, answer?: Answer) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const capabilities = answer === undefined ? {} : { elicitation: {}, sampling: {} }
      const client = new Client({ name: "serve-elicitation-test", version: "1.0.0" }, { capabilities })
      if (answer !== undefined) {
        client.setRequestHandler(ElicitRequestSchema, (request, extra) => answer(request, extra))
        client.setRequestHandler(CreateMessageRequestSchema, () => ({
          role: "assistant",
          content: { type: "text", text: "the client" },
          model: "client",
          stopReason: "endTurn"
        }))
      }
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** A worker of the fixture behind a grant of its own, named `w`. */
const served = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const serve = yield* McpServe.McpServe
  const id = yield* workers.open(config)
  return { url: serve.url!, grant: yield* serve.grant({ w: id }) }
})

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text
const elicit = (client: { callTool: Client["callTool"] }, message: string, signal?: AbortSignal) =>
  Effect.promise(() =>
    client.callTool({ name: "w__test_elicitation", arguments: { message } }, undefined, signal && { signal })
  )
const sample = (client: { callTool: Client["callTool"] }) =>
  Effect.promise(() => client.callTool({ name: "w__test_sampling", arguments: { prompt: "hello" } }))

/** One 2026-07-28 `tools/call` exchange on the wire, declaring elicitation: its JSON-RPC answer. */
const modernCall = async (
  url: string,
  grant: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown>
): Promise<{ result?: unknown; error?: { code: number; message: string; data: Record<string, unknown> } }> =>
  modernPost(
    url,
    grant,
    { method: "tools/call", name, params: { name, arguments: args, ...extra } },
    { elicitation: {} }
  )

const accept = (username: string): ElicitResult => ({
  action: "accept",
  content: { username, email: `${username}@example.com` }
})

layer(hostLayer, { timeout: 60_000, excludeTestServices: true })("McpServe questions", (it) => {
  it.scoped("C151: a client that declared elicitation and sampling is asked, and the tool sees its answer", () =>
    Effect.gen(function* () {
      const { grant, url } = yield* served
      const asked: Array<unknown> = []
      const client = yield* connect(url, grant, async (request) => {
        asked.push(request.params.message)
        return accept("ada")
      })
      const before = hostAsked.length
      assert.include(textOf(yield* elicit(client, "who are you?")), '"username":"ada"')
      assert.deepStrictEqual(asked, ["who are you?"])
      assert.strictEqual(textOf(yield* sample(client)), "LLM response: the client")
      assert.strictEqual(hostAsked.length, before, "the host's handlers were not asked")
    })
  )

  it.scoped("C152: a client that declared neither gets the host handlers' answers", () =>
    Effect.gen(function* () {
      const { grant, url } = yield* served
      const client = yield* connect(url, grant)
      const before = hostAsked.length
      assert.include(textOf(yield* elicit(client, "who are you?")), '"action":"decline"')
      assert.strictEqual(textOf(yield* sample(client)), "LLM response: the host")
      assert.deepStrictEqual(hostAsked.slice(before), ["elicitation/create", "sampling/createMessage"])
    })
  )

  it.scoped("C151: two clients calling two workers at once are each asked only their own question", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* served, yield* served]
      const bothAsked = yield* Deferred.make<void>()
      const asked = new Map<string, Array<unknown>>([
        ["a", []],
        ["b", []]
      ])
      // Each answer waits until both questions are out, so both calls are in flight together.
      const answering = (who: string) => async (request: { params: Record<string, unknown> }) => {
        asked.get(who)!.push(request.params.message)
        if ([...asked.values()].every((questions) => questions.length > 0)) {
          Effect.runSync(Deferred.succeed(bothAsked, undefined))
        }
        await Effect.runPromise(Deferred.await(bothAsked))
        return accept(who)
      }
      const clientA = yield* connect(a.url, a.grant, answering("a"))
      const clientB = yield* connect(b.url, b.grant, answering("b"))
      const [resultA, resultB] = yield* Effect.all([elicit(clientA, "for a"), elicit(clientB, "for b")], {
        concurrency: 2
      })
      assert.deepStrictEqual(Object.fromEntries(asked), { a: ["for a"], b: ["for b"] })
      assert.include(textOf(resultA), '"username":"a"')
      assert.include(textOf(resultB), '"username":"b"')
    })
  )

  it.scoped("C153: a client's error answers the server; a cancelled call withdraws its open question", () =>
    Effect.gen(function* () {
      const { grant, url } = yield* served
      const asked = yield* Deferred.make<void>()
      const withdrawn = yield* Deferred.make<void>()
      let mode: "fail" | "hold" | "accept" = "fail"
      const client = yield* connect(url, grant, (_request, extra) => {
        if (mode === "fail") return Promise.reject(new Error("the user closed the dialog"))
        if (mode === "accept") return Promise.resolve(accept("again"))
        Effect.runSync(Deferred.succeed(asked, undefined))
        return new Promise((_resolve, reject) =>
          extra.signal.addEventListener("abort", () => {
            Effect.runSync(Deferred.succeed(withdrawn, undefined))
            reject(extra.signal.reason)
          })
        )
      })
      // The SDK 1.x client never cancels a request whose id is 0 (it tests the id for truth): the first question is
      // this one, which fails at the client and answers the server with a JSON-RPC error.
      const failed = (yield* elicit(client, "fail")) as CallToolResult
      assert.isTrue(failed.isError)
      assert.include(textOf(failed), "elicitation/create")
      mode = "hold"
      const abort = new AbortController()
      const call = yield* Effect.fork(Effect.exit(elicit(client, "cancel me", abort.signal)))
      yield* Deferred.await(asked)
      abort.abort()
      yield* Deferred.await(withdrawn)
      yield* call.await
      mode = "accept"
      assert.include(textOf(yield* elicit(client, "again")), '"username":"again"')
    })
  )

  it.scoped("C170: a 2026-07-28 client that answers input_required gets the result showing its answer", () =>
    Effect.gen(function* () {
      const { grant, url } = yield* served
      const asked: Array<unknown> = []
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const modern = new V2.Client(
            { name: "modern", version: "1.0.0" },
            { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } }
          )
          modern.setRequestHandler("elicitation/create", (request) => {
            asked.push(request.params.message)
            return accept("grace")
          })
          const headers = { Authorization: `Bearer ${grant}` }
          await modern.connect(new V2.StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
          return modern
        }),
        (modern) => Effect.promise(() => modern.close())
      )
      assert.strictEqual(client.getProtocolEra(), "modern")
      const before = hostAsked.length
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "w__test_elicitation", arguments: { message: "who?" } })
      )
      assert.include(textOf(result), '"username":"grace"')
      assert.deepStrictEqual(asked, ["who?"])
      assert.strictEqual(hostAsked.length, before, "the host's handlers were not asked")
    })
  )

  it.scoped("C171, C172: a forged, foreign or used requestState is refused, not_sent, and starts no call", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(config)
      const [mine, theirs] = [yield* serve.grant({ w: id }), yield* serve.grant({ w: id })]
      const call = (grant: string, extra: Record<string, unknown> = {}) =>
        Effect.promise(() => modernCall(serve.url!, grant, "w__test_elicitation", { message: "who?" }, extra))
      const first = (yield* call(mine)).result as { resultType: string; requestState: string; inputRequests: object }
      assert.strictEqual(first.resultType, "input_required")
      const [key] = Object.keys(first.inputRequests)
      const inputResponses = { [key!]: accept("ada") }
      const before = hostAsked.length
      for (const [grant, requestState] of [
        [mine, `${first.requestState}x`],
        [theirs, first.requestState]
      ] as const) {
        const refused = (yield* call(grant, { requestState, inputResponses })).error
        assert.strictEqual(refused?.code, -32602)
        assert.include(refused?.data, { _tag: "InvalidInput", path: "requestState", delivery: "not_sent" })
      }
      const answered = (yield* call(mine, { requestState: first.requestState, inputResponses })).result
      assert.include(textOf(answered), '"username":"ada"')
      const used = (yield* call(mine, { requestState: first.requestState, inputResponses })).error
      assert.include(used?.data, { _tag: "InvalidInput", delivery: "not_sent" })
      assert.strictEqual(hostAsked.length, before, "no refused retry reached the worker")
    })
  )
})

// A host of its own, whose server-request timeout is short and whose worker's call budget is not: only the question
// can run out.
const briefHost = McpServe.layerServe({ http: {} }).pipe(
  Layer.provideMerge(NodeMcpWorkers.layerWithView({ handlers, requestTimeout: "1 second" }))
)

plain.scopedLive("C153: a client that does not answer within the host's timeout answers the server with an error", () =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const serve = yield* McpServe.McpServe
    const grant = yield* serve.grant({ w: yield* workers.open({ ...config, timeoutMs: 60_000 }) })
    const withdrawn = yield* Deferred.make<void>()
    const client = yield* connect(
      serve.url!,
      grant,
      (_request, extra) =>
        new Promise((_resolve, reject) =>
          extra.signal.addEventListener("abort", () => {
            Effect.runSync(Deferred.succeed(withdrawn, undefined))
            reject(extra.signal.reason)
          })
        )
    )
    // The SDK 1.x client cancels no request whose id is 0; the second question is the one watched.
    yield* sample(client)
    const result = (yield* elicit(client, "nobody answers")) as CallToolResult
    assert.isTrue(result.isError)
    assert.include(textOf(result), "elicitation/create")
    yield* Deferred.await(withdrawn)
  }).pipe(Effect.provide(briefHost))
)

plain.scopedLive("C173: a client that never retries: the question is answered with an error, the call let go", () =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const serve = yield* McpServe.McpServe
    const id = yield* workers.open({ ...config, timeoutMs: 60_000 })
    const grant = yield* serve.grant({ w: id })
    const failed = yield* Deferred.make<void>()
    yield* workers.events(id).pipe(
      Stream.filter((event) => event.method === "notifications/message"),
      Stream.runForEach(() => Deferred.succeed(failed, undefined)),
      Effect.forkScoped
    )
    const first = (yield* Effect.promise(() =>
      modernCall(serve.url!, grant, "w__test_elicitation", { message: "nobody retries" }, {})
    )).result as { resultType: string; requestState: string }
    assert.strictEqual(first.resultType, "input_required")
    // The host's timeout answers the worker's server, whose tool tells of it.
    yield* Deferred.await(failed)
    const late = yield* Effect.promise(() =>
      modernCall(
        serve.url!,
        grant,
        "w__test_elicitation",
        { message: "nobody retries" },
        {
          requestState: first.requestState,
          inputResponses: { q1: accept("late") }
        }
      )
    )
    assert.include(late.error?.data, { _tag: "InvalidInput", delivery: "not_sent" })
  }).pipe(Effect.provide(briefHost))
)
