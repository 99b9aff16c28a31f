// Random calls of two MCP clients through the gateway to one worker, some cancelled: whatever each client is told,
// the server's own record of the calls it received agrees, and no call reached it twice.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import fc from "fast-check"
import { statefulConfig } from "../fixtures/servers.js"

const layer = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))

interface Step {
  readonly ms: number
  /** Abort the call this long after it is made; absent: let it end. */
  readonly abortAfter: number | undefined
}

const step: fc.Arbitrary<Step> = fc.record({
  ms: fc.integer({ min: 0, max: 20 }),
  abortAfter: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: fc.integer({ min: 0, max: 15 }), weight: 1 }
  )
})

// 1,000 calls in all, 500 a client.
const perClient = { minLength: 500, maxLength: 500 }

type Outcome = "result" | "not_sent" | "unknown" | "aborted"

/** One call of `client`, and what its client was told. */
const call = async (client: Client, token: string, { abortAfter, ms }: Step): Promise<Outcome> => {
  const abort = new AbortController()
  const timer = abortAfter === undefined ? undefined : setTimeout(() => abort.abort(), abortAfter)
  try {
    await client.callTool({ name: "w__sleep", arguments: { ms, token } }, undefined, { signal: abort.signal })
    return "result"
  } catch (error) {
    if (abort.signal.aborted && !(error instanceof McpError && error.data !== undefined)) return "aborted"
    const delivery = (error as McpError).data as { delivery?: string } | undefined
    assert.include(["not_sent", "unknown"], delivery?.delivery, String(error))
    return delivery!.delivery as Outcome
  } finally {
    clearTimeout(timer)
  }
}

const connect = (url: string, grant: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "property", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

describe("McpServe property", () => {
  it.scopedLive(
    "C132: two clients, random calls and cancels: every outcome is what the server did, once",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open(statefulConfig())
        const clients = [
          yield* connect(serve.url!, yield* serve.grant({ w: id })),
          yield* connect(serve.url!, yield* serve.grant({ w: id }))
        ]
        const plans = fc.sample(fc.tuple(fc.array(step, perClient), fc.array(step, perClient)), 1)[0]!
        const told = new Map<string, Outcome>()
        yield* Effect.promise(() =>
          Promise.all(
            plans.map(async (plan, c) => {
              for (const [i, next] of plan.entries()) {
                const token = `c${c}-${i}`
                told.set(token, await call(clients[c]!, token, next))
              }
            })
          )
        )
        // Every call the worker had in flight has ended: the host's record says it is free.
        yield* workers.status(id).pipe(Effect.repeat({ until: (status) => !status.busy }))
        const calls = (yield* workers.callTool(id, "calls")).structuredContent as {
          calls: Array<{ name: string; token?: string }>
        }
        const received = new Map<string, number>()
        for (const entry of calls.calls) {
          if (entry.token !== undefined) received.set(entry.token, (received.get(entry.token) ?? 0) + 1)
        }
        for (const [token, outcome] of told) {
          const times = received.get(token) ?? 0
          assert.isAtMost(times, 1, `${token} reached the server ${times} times`)
          if (outcome === "result") assert.strictEqual(times, 1, `${token}: a result, so the server ran it`)
          if (outcome === "not_sent") assert.strictEqual(times, 0, `${token}: not_sent, yet the server got it`)
        }
        // The plan exercised both answers a client can be given besides its own abort.
        assert.includeMembers([...told.values()], ["result", "not_sent"])
        assert.strictEqual(told.size, plans[0].length + plans[1].length)
      }).pipe(Effect.provide(layer)),
    120_000
  )
})
