// C59: a worker opened with `tools: { allow, deny }` offers only those tools, on every surface and every path a request
// takes to the owner: the host service, an owner in a process of its own, the Promise client, a remote thread (relayed
// and straight to the owner thread), a Direct request posted by hand on the owner's channel, the socket's clients,
// McpClient, and a document's entries. Real fixture servers; the fixture's `calls` tool says what reached the server.
import { assert, describe, it } from "@effect/vitest"
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import { McpClient, McpGrants, makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "../../packages/node/src/internal/thread/protocol.js"
import { modernConfig, statefulConfig } from "../fixtures/servers.js"
import { startedThreads, structured, withHost, withPromiseClient } from "./helpers.js"
import { socketPath } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import {
  badFilters,
  effectFilterSurface,
  exerciseFilter,
  expectedFilter,
  type FilterSurface,
  filter,
  openRefusal,
  run
} from "./toolFilterSuite.js"

const entry = remoteEntry()
const legacy = { listChanged: true } as const
const stateful = () => statefulConfig("--exit-on-stdin-eof")

// The filter suite on a worker the host opens with `options`, through `surface`; the worker is closed after.
const hostSuite = (
  options: { readonly isolation?: "thread" | "process" },
  config = stateful(),
  era: { readonly listChanged: boolean } = legacy
) =>
  withHost(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(config, { ...options, tools: filter })
      const seen = yield* Effect.promise(() => exerciseFilter(effectFilterSurface(workers), id, era))
      assert.deepStrictEqual(seen, expectedFilter(era))
      assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
    })
  )

describe("C59: a worker offers only the tools its filter allows", () => {
  it.live("the host service: listTools, callTool refused unsent, a changed tool list; tools() and describe()", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful(), { tools: filter })
        const seen = yield* Effect.promise(() => exerciseFilter(effectFilterSurface(workers), id, legacy))
        assert.deepStrictEqual(seen, expectedFilter(legacy))
        // The binding and the declarations are over the filtered list: the refused tools are not methods.
        const bound = yield* workers.tools(id)
        assert.deepStrictEqual(Object.keys(bound).sort(), ["add_tools", "browser_open", "calls", "echo", "inc"])
        const declarations = yield* workers.describe(id)
        assert.include(declarations, "browser_open(")
        for (const hidden of ["sleep(", "browser_install(", "browser_secret(", "hidden("]) {
          assert.notInclude(declarations, hidden)
        }
        assert.deepStrictEqual(structured(yield* bound.echo({ token: "bound" })), { token: "bound" })
        // A worker opened without a filter offers every tool of the same server.
        const open = yield* workers.open(stateful())
        const all = (yield* workers.listTools(open)).tools.map((tool) => tool.name)
        assert.includeMembers(all, ["sleep", "fail", "echo", "add_tools", "big"])
      })
    )
  )

  it.live("an owner in a process of its own (isolation: process)", () => hostSuite({ isolation: "process" }))

  it.live("a 2026-07-28 server, in a thread and in a process", () =>
    Effect.zipRight(
      hostSuite({ isolation: "thread" }, modernConfig(), { listChanged: false }),
      hostSuite({ isolation: "process" }, modernConfig(), { listChanged: false })
    )
  )

  it.live("the Promise client in the host's thread: open with tools, the suite, tools() and describe()", () =>
    withHost(
      Effect.gen(function* () {
        const seen = yield* withPromiseClient(async (mcp) => {
          const id = await mcp.open(stateful(), { tools: filter })
          const suite = await exerciseFilter(mcp, id, legacy)
          const methods = Object.keys(await mcp.tools(id)).sort()
          const declarations = await mcp.describe(id)
          await mcp.close(id)
          return { suite, methods, hidesSleep: !declarations.includes("sleep(") }
        })
        assert.deepStrictEqual(seen, {
          suite: expectedFilter(legacy),
          methods: ["add_tools", "browser_open", "calls", "echo", "inc"],
          hidesSleep: true
        })
      })
    )
  )

  it.live("a remote thread opens with a filter: layerRemote and the Promise client, straight and relayed", () =>
    withHost(
      Effect.gen(function* () {
        const outcome = yield* runInThread(entry(), {
          scenario: "toolFilter",
          data: { config: stateful(), filter, bad: badFilters }
        })
        assert.isTrue(outcome.ok, outcome.ok ? "" : String(outcome.error))
        assert.deepStrictEqual(outcome.ok ? outcome.value : null, {
          effect: expectedFilter(legacy),
          effectRelayed: expectedFilter(legacy),
          promise: expectedFilter(legacy),
          promiseRelayed: expectedFilter(legacy),
          // Checked in the remote thread, through the Promise client and through layerRemote alike.
          bad: badFilters.flatMap(([, at]) => [at, at])
        })
      })
    )
  )

  it.scopedLive("the owner itself refuses: a Direct request by hand on the owner's channel is never sent", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(stateful(), { tools: filter })
      const remote = yield* handRemote
      // A relayed call first (as a remote's first call is), then the same remote straight to the owner thread.
      remote.post(1, {
        _tag: "RemoteCall",
        workerId: id,
        method: "tools/call",
        params: call("echo", { token: "relayed" }),
        direct: true
      })
      assert.notStrictEqual((yield* remote.answer(1))._tag, "RemoteFailure")
      remote.direct(2, id, "tools/call", call("sleep", { ms: 1 }))
      const refused = yield* remote.answer(2)
      assert.strictEqual(refused._tag, "RemoteFailure")
      assert.deepInclude(refused.error as object, { _tag: "InvalidInput", delivery: "not_sent", path: "name" })
      remote.direct(3, id, "tools/list", "{}")
      const listed = yield* remote.answer(3)
      const result = JSON.parse(listed.result as string)
      const tools = (listed.envelope === true ? result.result : result).tools as Array<{ name: string }>
      assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), ["add_tools", "calls", "echo", "inc"])
      const calls = structured(yield* workers.callTool(id, "calls")).calls as Array<{ name: string }>
      assert.deepStrictEqual(
        calls.map((c) => c.name),
        ["echo", "calls"]
      )
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.scopedLive("the socket: a connected Promise client opens with a filter; a grant; layerConnect", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const context = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true }))
      const host = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const grants = context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
      const mcp = yield* Effect.acquireRelease(
        Effect.sync(() => makePromiseClient({ connect: socket.path })),
        (client) => Effect.promise(() => client.dispose())
      )
      const connected = yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path }))
      const effect = connected.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const seen = yield* Effect.promise(async () => {
        const opened = await mcp.open(stateful(), { tools: filter })
        const granted = await grants.grant(await run(host.open(stateful(), { tools: filter }))).pipe(Effect.runPromise)
        const viaEffect = await run(effect.open(stateful(), { tools: filter }))
        return {
          opened: await exerciseFilter(mcp, opened, legacy),
          granted: await exerciseFilter(mcp, granted, legacy),
          effect: await exerciseFilter(effectFilterSurface(effect), viaEffect, legacy),
          bad: await Promise.all(
            badFilters.map(([tools]) => openRefusal(mcp.open(stateful(), { tools: tools as any })))
          ),
          badEffect: await Promise.all(
            badFilters.map(([tools]) => openRefusal(run(effect.open(stateful(), { tools: tools as any }))))
          )
        }
      })
      assert.deepStrictEqual(seen.opened, expectedFilter(legacy))
      assert.deepStrictEqual(seen.granted, expectedFilter(legacy))
      assert.deepStrictEqual(seen.effect, expectedFilter(legacy))
      assert.deepStrictEqual(
        seen.bad.map((refusal) => [refusal._tag, refusal.path]),
        badFilters.map(([, at]) => ["InvalidInput", at])
      )
      assert.deepStrictEqual(seen.badEffect, seen.bad)
    })
  )

  it.scopedLive("McpClient: the filter of its options, the same refusals", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.make(stateful(), { tools: filter })
      const surface: FilterSurface = {
        listTools: () => run(client.listTools()),
        callTool: (_, name, args) => run(client.callTool(name, args)),
        status: () => run(client.status)
      }
      const seen = yield* Effect.promise(() => exerciseFilter(surface, client.workerId, legacy))
      assert.deepStrictEqual(seen, expectedFilter(legacy))
      for (const [tools, at] of badFilters) {
        const refused = yield* Effect.flip(McpClient.withClient(stateful(), () => Effect.void, { tools: tools as any }))
        assert.deepInclude(refused as object, { _tag: "InvalidInput", path: at, delivery: "not_sent" })
      }
    })
  )
})

describe("C59: a document's entries, and filters refused before anything starts", () => {
  const document = Either.getOrThrow(
    McpConfig.make({ servers: { narrow: stateful(), wide: stateful(), bad: stateful() } })
  )
  const names = (result: { readonly tools: ReadonlyArray<{ readonly name: string }> }) =>
    result.tools.map((tool) => tool.name)

  it.live("openAll: an entry's tools replace the common ones; a bad filter fails its entry alone", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const options = {
          open: { tools: { deny: ["echo", "sleep"] } },
          entries: { narrow: { tools: { allow: ["echo"] } }, bad: { tools: { allow: ["ok", 3 as any] } } }
        }
        const opened = yield* workers.openAll(document, options)
        const ids = OpenAll.ids(opened)
        assert.deepStrictEqual(Object.keys(ids).sort(), ["narrow", "wide"])
        assert.deepInclude(OpenAll.failures(opened).bad as object, {
          _tag: "InvalidInput",
          path: "options.tools.allow[1]",
          delivery: "not_sent"
        })
        assert.deepStrictEqual(names(yield* workers.listTools(ids.narrow)), ["echo"])
        const wide = names(yield* workers.listTools(ids.wide))
        assert.includeMembers(wide, ["inc", "calls", "fail"])
        assert.notInclude(wide, "echo")
        assert.notInclude(wide, "sleep")
        const refused = yield* Effect.flip(workers.callTool(ids.wide, "echo", { token: "x" }))
        assert.deepInclude(refused as object, { _tag: "InvalidInput", delivery: "not_sent" })
        assert.deepStrictEqual(structured(yield* workers.callTool(ids.narrow, "echo", { token: "x" })), { token: "x" })
        // The same through the Promise client, whose entries carry their tools too.
        const promise = yield* withPromiseClient(async (mcp) => {
          const again = await mcp.openAll(document, options)
          const listed = names(await mcp.listTools(OpenAll.ids(again).narrow!))
          await mcp.closeAll(again)
          return { listed, bad: (OpenAll.failures(again).bad as { path?: string }).path }
        })
        assert.deepStrictEqual(promise, { listed: ["echo"], bad: "options.tools.allow[1]" })
        const closed = yield* workers.closeAll(opened)
        assert.isTrue(Object.values(closed).every((result) => result._tag === "Closed"))
      })
    )
  )

  it.scopedLive("a bad filter is InvalidInput with its path, and no owner thread or process was started", () =>
    Effect.gen(function* () {
      const threads = yield* startedThreads
      // A command that does not exist: were anything started, the open would fail at stage spawn instead.
      const missing = { command: path.join(path.sep, "no", "such", "server") }
      const workers = yield* McpWorkers
      for (const [tools, at] of badFilters) {
        for (const isolation of ["thread", "process"] as const) {
          const refused = yield* Effect.flip(workers.open(missing, { isolation, tools: tools as any }))
          assert.deepInclude(refused as object, {
            _tag: "InvalidInput",
            where: "config",
            path: at,
            delivery: "not_sent"
          })
        }
      }
      const promise = yield* withPromiseClient((mcp) =>
        Promise.all(badFilters.map(([tools]) => openRefusal(mcp.open(missing, { tools: tools as any }))))
      )
      assert.deepStrictEqual(
        promise.map((refusal) => refusal.path),
        badFilters.map(([, at]) => at)
      )
      assert.strictEqual(threads.length, 0)
      // A good filter over the same missing command does start, and fails where a start fails.
      const started = yield* Effect.flip(workers.open(missing, { tools: { allow: ["*"] } }))
      assert.deepInclude(started as object, { _tag: "OpenFailed", stage: "spawn" })
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})

/** A remote client played by hand on this thread: requests to the host and Direct requests to an owner thread. */
const handRemote = Effect.acquireRelease(
  Effect.sync(() => {
    const from = Protocol.replyChannel(Protocol.randomId())
    const channel = new BroadcastChannel(from)
    const replies: Array<{ readonly _tag: string; readonly callId?: number; readonly [key: string]: unknown }> = []
    channel.onmessage = (event) => void replies.push((event as MessageEvent).data)
    const postOn = (name: string, message: unknown) => {
      const out = new BroadcastChannel(name)
      out.postMessage(message)
      out.close()
    }
    return {
      channel,
      post: (callId: number, operation: Record<string, unknown>) =>
        postOn(Protocol.hostChannel, { _tag: "RemoteRequest", from, callId, operation }),
      direct: (callId: number, workerId: string, method: string, params: string) =>
        postOn(Protocol.ownerChannel(workerId), {
          _tag: "Direct",
          from,
          callId,
          method,
          params,
          deadline: Date.now() + 10_000
        }),
      answer: (callId: number) =>
        Effect.gen(function* () {
          for (let i = 0; i < 500; i++) {
            const found = replies.find((reply) => reply.callId === callId && reply._tag !== "Ack")
            if (found !== undefined) return found
            yield* Effect.sleep(10)
          }
          return yield* Effect.dieMessage(`no answer to call ${callId}`)
        })
    }
  }),
  (remote) => Effect.sync(() => remote.channel.close())
)

const call = (name: string, args: Record<string, unknown> = {}) => JSON.stringify({ name, arguments: args })
