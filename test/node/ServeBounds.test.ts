// What the gateway lets a peer cost, what it refuses when a grant is made, and the trace context it carries through.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { statefulConfig } from "../fixtures/servers.js"

const maxBodyBytes = 64 * 1024
const maxSessions = 2
const layer = McpServe.layerServe({ http: {}, maxBodyBytes, maxSessions }).pipe(
  Layer.provideMerge(NodeMcpWorkers.layerWithView())
)

/**
 * A POST whose body is written in 16 KiB chunks and never ended: the gateway's answer, and how many bytes had been
 * written when it came. The request is destroyed with the scope.
 */
const endlessPost = (url: string, headers: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      http.request(url, { method: "POST", headers: { "content-type": "application/json", ...headers } })
    ),
    (request) => Effect.sync(() => request.destroy())
  ).pipe(
    Effect.flatMap((request) =>
      Effect.async<{ status: number; written: number; closed: Promise<void> }>((resume) => {
        let written = 0
        const chunk = Buffer.alloc(16 * 1024, " ")
        const timer = setInterval(() => {
          if (request.writableNeedDrain) return
          request.write(chunk)
          written += chunk.length
        }, 2)
        request.on("error", () => undefined)
        request.once("response", (response) => {
          clearInterval(timer)
          const closed = new Promise<void>((resolve) => response.socket.once("close", () => resolve()))
          response.resume()
          resume(Effect.succeed({ status: response.statusCode ?? 0, written, closed }))
        })
        return Effect.sync(() => clearInterval(timer))
      })
    )
  )

/** An MCP SDK client of the gateway presenting `grant`, or the error its connect failed with. */
const connected = (url: string, grant: string) =>
  Effect.promise(async () => {
    const client = new Client({ name: "bounds", version: "1.0.0" })
    const headers = { Authorization: `Bearer ${grant}` }
    return client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })).then(
      () => client,
      (error: Error & { code?: number }) => error
    )
  })

describe("McpServe bounds", () => {
  it.scopedLive("C133: without a grant the answer is 401 before any body is read, and the connection closes", () =>
    Effect.gen(function* () {
      const serve = yield* McpServe.McpServe
      const answer = yield* endlessPost(serve.url!, {})
      assert.strictEqual(answer.status, 401)
      yield* Effect.promise(() => answer.closed)
      // A head past the header bound is refused by the HTTP parser itself.
      const big = yield* Effect.promise(() =>
        fetch(serve.url!, { method: "POST", headers: { "x-pad": "x".repeat(16 * 1024) }, body: "{}" })
      )
      assert.strictEqual(big.status, 431)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C133: a granted body past the bound is refused while it is still being written", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const grant = yield* serve.grant({ w: yield* workers.open(statefulConfig()) })
      const answer = yield* endlessPost(serve.url!, { authorization: `Bearer ${grant}` })
      assert.strictEqual(answer.status, 413)
      assert.isAtLeast(answer.written, maxBodyBytes)
      yield* Effect.promise(() => answer.closed)
      const declared = yield* Effect.promise(() =>
        fetch(serve.url!, {
          method: "POST",
          headers: { authorization: `Bearer ${grant}`, "content-type": "application/json" },
          body: JSON.stringify({ pad: "x".repeat(maxBodyBytes) })
        })
      )
      assert.strictEqual(declared.status, 413)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C131: a worker name that holds the separator, or is no tool-name part, is refused when granted", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      for (const name of ["a__b", "has space", ""]) {
        const error = yield* Effect.flip(serve.grant({ [name]: id }))
        assert.deepStrictEqual([error._tag, error.delivery], ["InvalidInput", "not_sent"])
        assert.strictEqual((error as { path?: string }).path, `workers.${name}`)
      }
      const unknown = yield* Effect.flip(serve.grant({ ok: id, other: "mcpw_nothing" }))
      assert.strictEqual(unknown._tag, "UnknownWorker")
      const separator = yield* Effect.flip(
        Layer.build(McpServe.layerServe({ separator: "/" })).pipe(Effect.provide(NodeMcpWorkers.layerWithView()))
      )
      assert.deepStrictEqual(
        [separator._tag, (separator as { path?: string }).path],
        ["InvalidInput", "options.separator"]
      )
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive("C136: the client's trace context in _meta reaches the worker's server unchanged", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(statefulConfig())
      const grant = yield* serve.grant({ w: id })
      const client = new Client({ name: "traced", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      yield* Effect.acquireRelease(
        Effect.promise(() =>
          client.connect(new StreamableHTTPClientTransport(new URL(serve.url!), { requestInit: { headers } }))
        ),
        () => Effect.promise(() => client.close())
      )
      const meta = {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        tracestate: "vendor=value",
        baggage: "user=alice"
      }
      yield* Effect.promise(() => client.callTool({ name: "w__echo", arguments: { token: "t" }, _meta: meta }))
      const metas = (yield* workers.callTool(id, "metas")).structuredContent as { metas: Array<unknown> }
      assert.deepStrictEqual(metas.metas[0], meta)
    }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C133: at most maxSessions sessions: a revoked grant's close first, then the one idle the longest",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open(statefulConfig())
        const clients: Array<Client> = []
        yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(clients.map((client) => client.close()))))
        const open = (grant: string) =>
          Effect.map(connected(serve.url!, grant), (client) => {
            assert.instanceOf(client, Client)
            clients.push(client as Client)
            return client as Client
          })
        const call = (client: Client) =>
          Effect.promise(() =>
            client.callTool({ name: "w__inc", arguments: {} }).then(
              () => "called",
              (error: Error & { code?: number }) => error.code
            )
          )
        const grant = yield* serve.grant({ w: id })
        const idle = yield* open(grant)
        const busy = yield* open(grant)
        assert.strictEqual(yield* call(busy), "called")
        // The bound reached: the session idle the longest is closed, the others go on.
        const third = yield* open(grant)
        assert.strictEqual(yield* call(idle), 404)
        assert.deepStrictEqual([yield* call(busy), yield* call(third)], ["called", "called"])
        // A revoked grant's sessions are closed first, however recent.
        const other = yield* serve.grant({ w: id })
        yield* serve.revoke(grant)
        const fresh = yield* open(other)
        const again = yield* open(other)
        assert.deepStrictEqual([yield* call(fresh), yield* call(again)], ["called", "called"])
        assert.strictEqual(yield* call(third), 401)
      }).pipe(Effect.provide(layer))
  )

  it.scopedLive(
    "C140: on a private Unix socket: 0600 in a 0700 directory, the same bearer check, removed at the end",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-serve-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const socket = path.join(dir, "private", "gateway.sock")
        const post = (headers: Record<string, string>) =>
          Effect.promise(
            () =>
              new Promise<number>((resolve, reject) => {
                const request = http.request(
                  {
                    socketPath: socket,
                    path: "/mcp",
                    method: "POST",
                    headers: {
                      "content-type": "application/json",
                      accept: "application/json, text/event-stream",
                      ...headers
                    }
                  },
                  (response) => {
                    response.resume()
                    resolve(response.statusCode ?? 0)
                  }
                )
                request.on("error", reject)
                request.end(
                  JSON.stringify({
                    jsonrpc: "2.0",
                    id: 1,
                    method: "initialize",
                    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "u", version: "1" } }
                  })
                )
              })
          )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const workers = yield* McpWorkers
            const serve = yield* McpServe.McpServe
            const grant = yield* serve.grant({ w: yield* workers.open(statefulConfig()) })
            assert.strictEqual(serve.url, `http+unix://${encodeURIComponent(socket)}/mcp`)
            assert.strictEqual(fs.statSync(socket).mode & 0o777, 0o600)
            assert.strictEqual(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700)
            assert.strictEqual(yield* post({}), 401)
            assert.strictEqual(yield* post({ authorization: `Bearer ${grant}` }), 200)
          }).pipe(
            Effect.provide(
              McpServe.layerServe({ http: { path: socket } }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))
            )
          )
        )
        assert.isFalse(fs.existsSync(socket))
      })
  )
})
