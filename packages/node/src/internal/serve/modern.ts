/**
 * The gateway to MCP 2026-07-28 clients: stateless, each request its own exchange on the v2 SDK's handler, beside the
 * 2025-11-25 sessions on the same endpoint. The SDK's own classification decides which era a request is; the bearer
 * check and the body bound before it are the sessions' (C133, C134), and the tools are the same handlers (C148).
 *
 * @internal
 */
import { classifyInboundRequest, createMcpHandler, ProtocolError, Server } from "@modelcontextprotocol/server"
import type * as http from "node:http"
import { Readable } from "node:stream"
import * as Gateway from "./gateway.js"
import { handlers, type Run, version } from "./mcpServer.js"
import * as ModernTasks from "./modernTasks.js"
import * as ServeTasks from "./tasks.js"

/** The 2026-07-28 face of the gateway. @internal */
export interface Modern {
  /** Whether the SDK routes this request, whose body was read already, to its 2026-07-28 path. */
  readonly claims: (req: http.IncomingMessage, body: unknown) => Promise<boolean>
  readonly serve: (req: http.IncomingMessage, res: http.ServerResponse, body: unknown, bearer: string) => Promise<void>
  readonly close: () => Promise<void>
}

// The body was read and parsed under the gateway's bound (C133); the SDK is handed it as `parsedBody`, so the Request
// carries none and a 2025-11-25 request is classified without serializing it again.
const webRequest = (req: http.IncomingMessage, signal?: AbortSignal): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
  }
  return new Request(`http://127.0.0.1${req.url ?? "/mcp"}`, {
    method: req.method ?? "POST",
    headers,
    ...(signal && { signal })
  })
}

// The SDK's own classification (what `isLegacyRequest` runs on a parsed body), fed the headers it reads from the
// Node request: no web Request is built for a 2025-11-25 request, which never needs one.
const isLegacy = (req: http.IncomingMessage, body: unknown): boolean => {
  const header = (name: string) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value.join(", ") : value
  }
  const outcome = classifyInboundRequest({
    httpMethod: "POST",
    ...optional("protocolVersionHeader", header("mcp-protocol-version")),
    ...optional("mcpMethodHeader", header("mcp-method")),
    ...optional("mcpNameHeader", header("mcp-name")),
    body
  })
  return outcome.kind === "legacy"
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }

/** A server of the grant the request bears: the same `tools/list` and `tools/call` as a 2025-11-25 session's. */
const serverOf = (gateway: Gateway.Gateway, bearer: string, run: Run): Server => {
  const bundle = Gateway.bundleOf(gateway, bearer)
  const tasks = bundle !== undefined && ServeTasks.runsTasks(gateway, bundle)
  const capabilities = tasks ? { tools: {}, ...ModernTasks.capabilities } : { tools: {} }
  const server = new Server({ name: "mcp-worker", version }, { capabilities })
  const raise = ({ code, data, message }: { code: number; message: string; data: unknown }) =>
    new ProtocolError(code, message, data)
  const { callTool, listTools } = handlers(gateway, bearer, run, raise)
  // The same JSON under both SDKs' result types, which TypeScript sees as unrelated.
  server.setRequestHandler("tools/list", () => listTools() as never)
  server.setRequestHandler(
    "tools/call",
    (request, ctx) =>
      callTool(request.params, {
        signal: ctx.mcpReq.signal,
        notify: (notification) => ctx.mcpReq.notify(notification)
      }) as never
  )
  return server
}

/** The 2026-07-28 handler of `gateway`. @internal */
export const make = (gateway: Gateway.Gateway, run: Run): Modern => {
  const handler = createMcpHandler(({ authInfo }) => serverOf(gateway, authInfo?.token ?? "", run), {
    legacy: "reject"
  })
  return {
    claims: async (req, body) => req.method === "POST" && body !== undefined && !isLegacy(req, body),
    serve: async (req, res, body, bearer) => {
      // C148: the 2026-07-28 cancel is the client closing its response stream; it aborts the exchange.
      const abort = new AbortController()
      res.once("close", () => abort.abort())
      // C160: the SDK has no task runtime, so a task request is answered before it.
      const task = await ModernTasks.answer(gateway, bearer, run, body, abort.signal)
      if (task !== undefined)
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(task))
      const authInfo = { token: bearer, clientId: "mcp-worker-gateway", scopes: [] }
      const response = await handler.fetch(webRequest(req, abort.signal), { authInfo, parsedBody: body })
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()))
      if (response.body === null) return void res.end()
      Readable.fromWeb(response.body as never)
        .on("error", () => res.destroy())
        .pipe(res)
    },
    close: () => handler.close()
  }
}
