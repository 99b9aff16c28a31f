// `npm run bench:serve`: `tools/call` (tiny echo) from an MCP SDK client over streamable HTTP through the gateway
// (`McpServe`, a live worker behind it), against the naive proxy (an SDK server whose handler forwards each call to an
// SDK client of the same fixture server), and the SDK client speaking to the fixture over stdio directly. Blocks
// alternate between the three so that a busy machine slows each alike; medians per block, then the median of those.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { McpServe, NodeMcpWorkers } from "../packages/node/src/index.js"
import { median } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const fixture = { command: process.execPath, args: [path.resolve(here, "../test/fixtures/dist/stateful.mjs")] }
const blocks = 6
const perBlock = 300

const stdioClient = async (): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ ...fixture, stderr: "ignore" }))
  return client
}

const httpClient = async (url: string, headers: Record<string, string> = {}): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

/** The naive proxy: one SDK server per session, each call forwarded to one SDK client of the fixture. */
const naiveProxy = async (upstream: Client): Promise<{ url: string; close: () => Promise<void> }> => {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const server = http.createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"))
    const id = req.headers["mcp-session-id"]
    let transport = typeof id === "string" ? transports.get(id) : undefined
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => void transports.set(sessionId, created)
      })
      const proxy = new Server({ name: "naive", version: "1.0.0" }, { capabilities: { tools: {} } })
      proxy.setRequestHandler(ListToolsRequestSchema, () => upstream.listTools())
      proxy.setRequestHandler(CallToolRequestSchema, (request) => upstream.callTool(request.params))
      await proxy.connect(created)
      transport = created
    }
    await transport.handleRequest(req, res, body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()))
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

/** The median latency of `perBlock` calls, in µs. */
const timed = async (call: () => Promise<unknown>): Promise<number> => {
  const times: Array<number> = []
  for (let i = 0; i < perBlock; i++) {
    const started = performance.now()
    await call()
    times.push((performance.now() - started) * 1000)
  }
  return median(times)
}

const block = (client: Client, tool: string): Promise<number> =>
  timed(() => client.callTool({ name: tool, arguments: { token: "x" } }))

const runtime = ManagedRuntime.make(
  McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))
)
const { grant, hostCall, url } = await runtime.runPromise(
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const serve = yield* McpServe.McpServe
    const id = yield* workers.open(fixture)
    const hostCall = () => runtime.runPromise(workers.callTool(id, "echo", { token: "x" }))
    return { grant: yield* serve.grant({ w: id }), hostCall, url: serve.url! }
  })
)
const direct = await stdioClient()
const upstream = await stdioClient()
const proxy = await naiveProxy(upstream)
const viaGateway = await httpClient(url, { Authorization: `Bearer ${grant}` })
const viaProxy = await httpClient(proxy.url)

const results = {
  gateway: [] as Array<number>,
  proxy: [] as Array<number>,
  direct: [] as Array<number>,
  host: [] as Array<number>
}
await block(viaGateway, "w__echo")
await block(viaProxy, "echo")
await block(direct, "echo")
for (let b = 0; b < blocks; b++) {
  results.gateway.push(await block(viaGateway, "w__echo"))
  results.proxy.push(await block(viaProxy, "echo"))
  results.direct.push(await block(direct, "echo"))
  results.host.push(await timed(hostCall))
}

const gateway = median(results.gateway)
const naive = median(results.proxy)
const stdio = median(results.direct)
console.log(`callTool echo, ${blocks} blocks × ${perBlock} calls, median of block medians`)
console.log(`  gateway (HTTP → host → owner thread → stdio)  ${gateway.toFixed(0)} µs`)
console.log(
  `  naive SDK proxy (HTTP → SDK client → stdio)   ${naive.toFixed(0)} µs  (gateway ${(gateway / naive).toFixed(2)}×)`
)
console.log(`  SDK client over stdio, directly               ${stdio.toFixed(0)} µs`)
console.log(`  the host's own callTool (owner thread → stdio) ${median(results.host).toFixed(0)} µs`)

await Promise.all([viaGateway.close(), viaProxy.close(), direct.close()])
await proxy.close()
await upstream.close()
await runtime.dispose()
