// C133: admitted on its head; no grant, 401 unread; an oversized body refused before it is whole.
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomUUID, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as SocketFile from "../listen/socketFile.js"
import type { ListenError } from "../listen/socketFile.js"
import * as Gateway from "./gateway.js"
import * as Origin from "./origin.js"
import { ServeError } from "./layer.js"
import type { Modern } from "./modern.js"

/** What an unauthenticated peer can make the gateway hold. */
export const maxHeaderBytes = 8 * 1024

interface Session {
  readonly id: string
  readonly bearer: string
  /** C134: its bundle's, the tag checked once when it opened. */
  readonly key: string
  /** The least recent makes room at the bound. */
  lastActive: number
  readonly server: Server
  readonly transport: StreamableHTTPServerTransport
}

interface Options {
  readonly port: number
  /** C45 */
  readonly path: string | undefined
  readonly maxSessions: number
  readonly maxBodyBytes: number
  readonly serverOf: (bearer: string) => Server
  /** C148 */
  readonly modern: Modern
}

const bearerOf = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header)
  return match === null ? undefined : match[1]
}

// An unread body is never read.
const refuse = (res: http.ServerResponse, status: number, message: string): void => {
  res.writeHead(status, {
    "content-type": "application/json",
    connection: "close",
    ...(status === 401 ? { "www-authenticate": 'Bearer realm="mcp-worker"' } : {})
  })
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }))
  res.once("finish", () => res.req.destroy())
}

// The bearer is a secret: compared in constant time, as its tag is.
const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

type Body = { readonly _tag: "Read"; readonly value: unknown } | { readonly _tag: "Refused"; readonly status: number }

const readBody = (req: http.IncomingMessage, max: number): Promise<Body> =>
  new Promise((resolve) => {
    const declared = Number(req.headers["content-length"] ?? 0)
    if (declared > max) return resolve({ _tag: "Refused", status: 413 })
    const chunks: Array<Buffer> = []
    let bytes = 0
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > max) {
        req.pause()
        return resolve({ _tag: "Refused", status: 413 })
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      try {
        resolve({ _tag: "Read", value: text.length === 0 ? undefined : JSON.parse(text) })
      } catch {
        resolve({ _tag: "Refused", status: 400 })
      }
    })
    req.on("error", () => resolve({ _tag: "Refused", status: 400 }))
  })

async function handle(
  gateway: Gateway.Gateway,
  sessions: Map<string, Session>,
  options: Options,
  req: http.IncomingMessage,
  res: http.ServerResponse
): Promise<void> {
  const rebound = Origin.foreign(req.headers)
  if (rebound !== undefined) return refuse(res, 403, rebound)
  const bearer = bearerOf(req.headers.authorization)
  const id = req.headers["mcp-session-id"]
  const known = typeof id === "string" ? sessions.get(id) : undefined
  // C134: a session's own grant needs only to still hold; its tag was checked when the session opened.
  const own = known !== undefined && bearer !== undefined && sameText(known.bearer, bearer)
  const key = own ? known.key : bearer === undefined ? undefined : Gateway.bundleKeyOf(gateway, bearer)
  if (bearer === undefined || key === undefined || Gateway.heldBundle(gateway, key) === undefined) {
    return refuse(res, 401, "a grant that holds is required (Authorization: Bearer <grant>)")
  }
  if (gateway.closing) return refuse(res, 503, "the mcp-worker host is closing; the request was not sent")
  // Another grant's request looks like one to no session.
  if (typeof id === "string" && !own) return refuse(res, 404, "no such session")
  let body: unknown = undefined
  if (req.method === "POST") {
    const read = await readBody(req, options.maxBodyBytes)
    if (read._tag === "Refused") return refuse(res, read.status, "the request body was refused; nothing was sent")
    body = read.value
    if (options.modern.claims(req, body)) return options.modern.serve(req, res, body, bearer)
  }
  if (known !== undefined) {
    known.lastActive = performance.now()
    return known.transport.handleRequest(req, res, body)
  }
  if (req.method !== "POST" || !isInitializeRequest(body)) {
    return refuse(res, 400, "no session: the first request must be initialize")
  }
  await makeRoom(gateway, sessions, options.maxSessions)
  return (await open(sessions, options, bearer, key)).transport.handleRequest(req, res, body)
}

// C133: clients rarely end their sessions, and one told 404 opens a new one.
async function makeRoom(gateway: Gateway.Gateway, sessions: Map<string, Session>, max: number): Promise<void> {
  const revoked = [...sessions.values()].filter((session) => Gateway.bundleOf(gateway, session.bearer) === undefined)
  await Promise.all(revoked.map((session) => session.server.close()))
  while (sessions.size >= max) {
    let idlest: Session | undefined
    for (const session of sessions.values()) {
      if (idlest === undefined || session.lastActive < idlest.lastActive) idlest = session
    }
    await idlest!.server.close()
    sessions.delete(idlest!.id)
  }
}

async function open(sessions: Map<string, Session>, options: Options, bearer: string, key: string): Promise<Session> {
  const server = options.serverOf(bearer)
  // Counted from its start, so concurrent opens cannot pass the bound.
  const sessionId = randomUUID()
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => sessionId
  })
  const session: Session = { id: sessionId, bearer, key, server, transport, lastActive: performance.now() }
  sessions.set(sessionId, session)
  transport.onclose = () => void sessions.delete(sessionId)
  await server.connect(transport)
  return session
}

const bind = (server: http.Server, options: Options): Effect.Effect<string, ServeError | ListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const prepared = options.path === undefined ? undefined : yield* SocketFile.prepare(options.path)
    const bound = Effect.async<void, ServeError>((resume) => {
      server.once("error", (error) => resume(Effect.fail(new ServeError({ reason: "listen", detail: error.message }))))
      if (prepared === undefined) server.listen(options.port, "127.0.0.1", () => resume(Effect.void))
      else server.listen(prepared.path, () => resume(Effect.void))
    })
    yield* Effect.acquireRelease(bound, () => (prepared === undefined ? Effect.void : SocketFile.remove(prepared)))
    if (prepared === undefined) return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
    yield* SocketFile.restrict(prepared)
    return `http+unix://${encodeURIComponent(prepared.path)}/mcp`
  })

/** @internal */
export const listen = (
  gateway: Gateway.Gateway,
  options: Options
): Effect.Effect<string, ServeError | ListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const sessions = new Map<string, Session>()
    const server = http.createServer({ maxHeaderSize: maxHeaderBytes }, (req, res) => {
      handle(gateway, sessions, options, req, res).catch(() => {
        if (!res.headersSent) refuse(res, 500, "the request failed in the gateway")
        else res.destroy()
      })
    })
    server.headersTimeout = 10_000
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        await Promise.all([...sessions.values()].map((session) => session.server.close()))
        await options.modern.close()
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      })
    )
    return yield* bind(server, options)
  })
