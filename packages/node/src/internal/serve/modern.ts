// C133, C134, C148, C162, C163: stateless, beside the sessions; a handler per grant.
import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  createRequestStateCodec,
  isJSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/server"
import type {
  McpHttpHandler,
  RequestStateCodec,
  ServerContext,
  ServerEvent,
  ServerEventBus
} from "@modelcontextprotocol/server"
import { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import { randomBytes, randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as http from "node:http"
import { Readable } from "node:stream"
import * as Gateway from "./gateway.js"
import { type Fork, handlers, type Raise, type Run, version } from "./mcpServer.js"
import * as ModernTasks from "./modernTasks.js"
import * as Questions from "./questions.js"
import * as Beyond from "./resources.js"
import * as ServeTasks from "./tasks.js"

/** @internal */
export interface Modern {
  readonly claims: (req: http.IncomingMessage, body: unknown) => boolean
  readonly serve: (req: http.IncomingMessage, res: http.ServerResponse, body: unknown, bearer: string) => Promise<void>
  readonly close: () => Promise<void>
}

// C133: `parsedBody`, so a 2025-11-25 request is not serialized again.
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

const headerOf = (req: http.IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

const probe = { jsonrpc: "2.0", id: 0, method: "ping" }
// The versions the SDK's classification takes for 2025-11-25 and before, asked of it once.
const legacyVersions: ReadonlySet<string> = new Set(
  SUPPORTED_PROTOCOL_VERSIONS.filter(
    (version) =>
      classifyInboundRequest({ httpMethod: "POST", protocolVersionHeader: version, body: probe }).kind === "legacy"
  )
)

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The SDK classifies a JSON-RPC request legacy unless a header or its `_meta` names a later revision; checked here
 * without the SDK's three schema passes, and anything else is left to it.
 *
 * @internal
 */
export const plainlyLegacy = (version: string | undefined, body: unknown): boolean => {
  if ((version !== undefined && !legacyVersions.has(version)) || !isPlainObject(body)) return false
  const meta = isPlainObject(body.params) ? body.params._meta : undefined
  return !(isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta) && isJSONRPCRequest(body)
}

// The SDK's own classification: a 2025-11-25 request never needs a web Request.
const isLegacy = (req: http.IncomingMessage, body: unknown): boolean => {
  const version = headerOf(req, "mcp-protocol-version")
  if (plainlyLegacy(version, body)) return true
  const outcome = classifyInboundRequest({
    httpMethod: "POST",
    ...optional("protocolVersionHeader", version),
    ...optional("mcpMethodHeader", headerOf(req, "mcp-method")),
    ...optional("mcpNameHeader", headerOf(req, "mcp-name")),
    body
  })
  return outcome.kind === "legacy"
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }

const raise: Raise = ({ code, data, message }) => new ProtocolError(code, message, data)

/** C170–C174: the calls held between a client's exchanges, and the key that seals their states. */
interface Asking {
  readonly held: Map<string, Questions.Held>
  readonly codec: RequestStateCodec<{ readonly id: string; readonly round: number }>
}

const makeAsking = (): Asking => ({
  held: new Map(),
  // C172: bound to the grant; one process serves every round, so the key never leaves it.
  codec: createRequestStateCodec({ key: randomBytes(32), bind: (ctx) => ctx.http?.authInfo?.token ?? "" })
})

type CallTool = ReturnType<typeof handlers>["callTool"]
type CallParams = Parameters<CallTool>[0]

const declaredOf = (ctx: ServerContext) =>
  (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    Readonly<Record<string, unknown>> | undefined

// C172
const refused = (message: string) =>
  raise(
    Gateway.mcpErrorOf(new InvalidInput({ where: "arguments", path: "requestState", message, delivery: "not_sent" }))
  )

/** C170, C171: one exchange's answer: the call's result, or `input_required` with a fresh state. */
const exchange = async (asking: Asking, held: Questions.Held, ctx: ServerContext): Promise<unknown> => {
  const progressToken = ctx.mcpReq._meta?.progressToken
  held.progress =
    progressToken === undefined
      ? undefined
      : (params) =>
          void ctx.mcpReq.notify({ method: "notifications/progress", params: { ...params, progressToken } } as never)
  const step = await Questions.next(held, ctx.mcpReq.signal).finally(() => {
    held.progress = undefined
  })
  if (step._tag === "Done") return step.result
  if (step._tag === "Failed") throw step.error
  const requestState = await asking.codec.mint({ id: held.id, round: held.round }, ctx)
  return { resultType: "input_required", inputRequests: step.inputRequests, requestState }
}

/** C170: a call of a client that declared a capability a worker's server can ask for, held between exchanges. */
const heldCall = (asking: Asking, bearer: string, callTool: CallTool, params: CallParams, ctx: ServerContext) => {
  const id = randomUUID()
  const held = Questions.hold(id, bearer, params.name, () => asking.held.delete(id))
  held.declared = declaredOf(ctx)
  asking.held.set(id, held)
  callTool(params, {
    signal: held.end.signal,
    notify: async (notification) => held.progress?.(notification.params),
    questions: Questions.heldCaller(held)
  }).then(
    (result) => Questions.settle(held, { _tag: "Done", result }),
    (error: unknown) => Questions.settle(held, { _tag: "Failed", error })
  )
  return exchange(asking, held, ctx)
}

/** C171, C172: a retry answers its call's open questions, once, and waits on the same call. */
const retried = async (asking: Asking, bearer: string, name: string, state: string, ctx: ServerContext) => {
  const payload = await asking.codec.verify(state, ctx).catch(() => undefined)
  if (payload === undefined)
    throw refused("this requestState was not issued to this grant by this gateway, or has expired")
  const held = asking.held.get(payload.id)
  if (held === undefined || held.grant !== bearer || held.round !== payload.round || held.waiting !== undefined)
    throw refused("this requestState was already used, or its call has ended")
  if (held.tool !== name) throw refused(`this requestState belongs to a call of ${JSON.stringify(held.tool)}`)
  held.round++
  held.declared = declaredOf(ctx) ?? held.declared
  Questions.answer(held, ctx.mcpReq.inputResponses)
  return exchange(asking, held, ctx)
}

/** C160, C161, C162 */
const serverOf = (gateway: Gateway.Gateway, bearer: string, run: Run, asking: Asking): Server => {
  const bundle = Gateway.bundleOf(gateway, bearer)
  const served = Beyond.capabilitiesOf(gateway, bundle)
  const tasks = bundle !== undefined && ServeTasks.runsTasks(gateway, bundle)
  const capabilities = tasks ? { ...served, ...ModernTasks.capabilities } : served
  const server = new Server({ name: "mcp-worker", version }, { capabilities })
  const { answer, callTool, listTools } = handlers(gateway, bearer, run, raise)
  // The same JSON under two SDKs' result types.
  if (capabilities.tools !== undefined) {
    server.setRequestHandler("tools/list", () => listTools() as never)
    server.setRequestHandler("tools/call", (request, ctx) => {
      const state = ctx.mcpReq.requestState()
      if (typeof state === "string") return retried(asking, bearer, request.params.name, state, ctx) as never
      if (Questions.declaresAny(declaredOf(ctx)))
        return heldCall(asking, bearer, callTool, request.params, ctx) as never
      return callTool(request.params, {
        signal: ctx.mcpReq.signal,
        notify: (notification) => ctx.mcpReq.notify(notification)
      }) as never
    })
  }
  for (const [method, handle] of Beyond.declaredHandles(gateway, answer, capabilities)) {
    server.setRequestHandler(
      method as "prompts/get",
      (request, ctx) => handle((request.params ?? {}) as Record<string, unknown>, ctx.mcpReq.signal) as never
    )
  }
  return server
}

const eventOf = (method: string, params: Record<string, unknown> | undefined): ServerEvent | undefined => {
  switch (method) {
    case "notifications/tools/list_changed":
      return { kind: "tools_list_changed" }
    case "notifications/prompts/list_changed":
      return { kind: "prompts_list_changed" }
    case "notifications/resources/list_changed":
      return { kind: "resources_list_changed" }
    case "notifications/resources/updated":
      return typeof params?.uri === "string" ? { kind: "resource_updated", uri: params.uri, params } : undefined
  }
  return undefined
}

/** C163, C30: the SDK's router filters each stream's share. */
const grantBus = (gateway: Gateway.Gateway, bearer: string, fork: Fork): ServerEventBus => {
  const listeners = new Set<(event: ServerEvent) => void>()
  let watching: Fiber.RuntimeFiber<void> | undefined = undefined
  const publish = (event: ServerEvent) => {
    for (const listener of [...listeners]) listener(event)
  }
  const announce = (method: string, params?: Record<string, unknown>) =>
    Effect.sync(() => {
      const event = eventOf(method, params)
      if (event !== undefined) publish(event)
    })
  return {
    publish,
    subscribe: (listener) => {
      listeners.add(listener)
      const bundle = Gateway.bundleOf(gateway, bearer)
      if (watching === undefined && bundle !== undefined) {
        watching = fork(Beyond.watch(gateway, bundle, () => true, announce))
      }
      return () => {
        if (!listeners.delete(listener) || listeners.size > 0 || watching === undefined) return
        fork(Fiber.interruptFork(watching))
        watching = undefined
      }
    }
  }
}

type Listen = { readonly id: unknown; readonly uris: ReadonlyArray<string> }

const listenOf = (body: unknown): Listen | undefined => {
  const message = body as {
    method?: unknown
    id?: unknown
    params?: { notifications?: { resourceSubscriptions?: unknown } }
  }
  if (typeof body !== "object" || body === null || message.method !== "subscriptions/listen") return undefined
  const uris = message.params?.notifications?.resourceSubscriptions
  return { id: message.id, uris: Array.isArray(uris) ? uris.filter((uri) => typeof uri === "string") : [] }
}

/** C164, C142 */
const subscribeListened = async (
  gateway: Gateway.Gateway,
  bearer: string,
  run: Run,
  listen: Listen,
  signal: AbortSignal
): Promise<Response | undefined> => {
  if (listen.uris.length === 0) return undefined
  if (Beyond.capabilitiesOf(gateway, Gateway.bundleOf(gateway, bearer)).resources?.subscribe !== true) return undefined
  const { answer } = handlers(gateway, bearer, run, raise)
  for (const uri of listen.uris) {
    const failed = await answer(
      (bundle) => Beyond.resourceRequest(gateway, bundle, "subscribeResource", { uri }),
      signal
    ).then(
      () => undefined,
      // C132
      (error: unknown) => {
        if (error instanceof ProtocolError) return error
        throw error
      }
    )
    if (failed !== undefined) {
      const error = { code: failed.code, message: failed.message, data: failed.data }
      return Response.json({ jsonrpc: "2.0", id: listen.id, error })
    }
  }
  return undefined
}

/** @internal */
export const make = (gateway: Gateway.Gateway, run: Run, fork: Fork): Modern => {
  const byGrant = new Map<string, McpHttpHandler>()
  const asking = makeAsking()
  // C133: a lapsed grant loses its handler when another opens one.
  const handlerOf = (bearer: string): McpHttpHandler => {
    const known = byGrant.get(bearer)
    if (known !== undefined) return known
    for (const [other, handler] of byGrant) {
      if (Gateway.bundleOf(gateway, other) === undefined) {
        byGrant.delete(other)
        void handler.close()
      }
    }
    const handler = createMcpHandler(() => serverOf(gateway, bearer, run, asking), {
      legacy: "reject",
      bus: grantBus(gateway, bearer, fork)
    })
    byGrant.set(bearer, handler)
    return handler
  }
  return {
    claims: (req, body) => req.method === "POST" && body !== undefined && !isLegacy(req, body),
    serve: async (req, res, body, bearer) => {
      // C148
      const abort = new AbortController()
      res.once("close", () => abort.abort())
      // C160
      const task = await ModernTasks.answer(gateway, bearer, run, body, abort.signal)
      if (task !== undefined)
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(task))
      const listen = listenOf(body)
      const refused = listen && (await subscribeListened(gateway, bearer, run, listen, abort.signal))
      const authInfo = { token: bearer, clientId: "mcp-worker-gateway", scopes: [] }
      const response =
        refused ?? (await handlerOf(bearer).fetch(webRequest(req, abort.signal), { authInfo, parsedBody: body }))
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()))
      if (response.body === null) return void res.end()
      Readable.fromWeb(response.body as never)
        .on("error", () => res.destroy())
        .pipe(res)
    },
    close: async () => {
      // C173: a call held for a retry that can no longer come ends at its worker's server.
      for (const held of [...asking.held.values()]) {
        held.end.abort()
        held.release()
      }
      const handlers = [...byGrant.values()]
      byGrant.clear()
      await Promise.all(handlers.map((handler) => handler.close()))
    }
  }
}
