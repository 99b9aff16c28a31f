// One check of a caller's arguments for every surface (Operations.prepare): 200 generated bad inputs, each refused
// with the same InvalidInput, naming the same path, by the host, a remote thread (layerRemote and its Promise
// client), the socket (the Promise client and layerConnect) and McpClient. C16.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { statefulConfig } from "../fixtures/servers.js"
import { listening } from "./listenSandbox.js"
import { badInputs, refusals } from "./prepareSuite.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()
const inputs = badInputs(200, 35)

/** An Effect call as a Promise that rejects with its failure. */
const settle = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) =>
    exit._tag === "Success" ? exit.value : Promise.reject(Cause.squash(exit.cause))
  )

describe("C16: the same bad input is the same error on every surface", () => {
  it.scopedLive(
    "200 generated bad callTool inputs: host, remote thread, socket and McpClient refuse each alike, unsent",
    () =>
      Effect.gen(function* () {
        const { grants, path: socketFile, workers } = yield* listening()
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const grant = yield* grants.grant(id)

        const host = yield* Effect.promise(() =>
          refusals(inputs, (name, args, options) => settle(workers.callTool(id, name as string, args as any, options)))
        )
        for (const refusal of host) assert.match(refusal, /^InvalidInput (arguments) \S+ not_sent$/)

        const mcp = yield* Effect.acquireRelease(
          Effect.sync(() => makePromiseClient({ connect: socketFile })),
          (client) => Effect.promise(() => client.dispose())
        )
        const socketPromise = yield* Effect.promise(() =>
          refusals(inputs, (name, args, options) => mcp.callTool(grant, name as string, args as any, options))
        )
        const connected = yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socketFile }))
        const remote = connected.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
        const socketEffect = yield* Effect.promise(() =>
          refusals(inputs, (name, args, options) =>
            settle(remote.callTool(grant, name as string, args as any, options))
          )
        )
        const client = yield* McpClient.make(statefulConfig("--exit-on-stdin-eof"))
        const mcpClient = yield* Effect.promise(() =>
          refusals(inputs, (name, args, options) => settle(client.callTool(name as string, args as any, options)))
        )
        const thread = yield* runInThread(entry(), { scenario: "refusals", data: { id, inputs } })
        assert.isTrue(thread.ok, JSON.stringify(thread))
        const { effect, promise } = (thread as { value: { effect: Array<string>; promise: Array<string> } }).value

        const differing = (name: string, seen: ReadonlyArray<string>) =>
          seen.flatMap((refusal, i) =>
            refusal === host[i] ? [] : [`${name}: ${JSON.stringify(inputs[i])}: ${refusal} (host: ${host[i]})`]
          )
        assert.deepStrictEqual(
          [
            ...differing("socket Promise client", socketPromise),
            ...differing("layerConnect", socketEffect),
            ...differing("McpClient", mcpClient),
            ...differing("layerRemote", effect),
            ...differing("remote Promise client", promise)
          ],
          []
        )
        // Nothing reached the server.
        const calls = (yield* workers.callTool(id, "calls")).structuredContent as { calls: Array<{ name: string }> }
        assert.deepStrictEqual(
          calls.calls.map((call) => call.name),
          ["calls"]
        )
      }),
    120_000
  )
})
