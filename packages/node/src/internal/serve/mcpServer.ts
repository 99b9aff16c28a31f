/**
 * The gateway's MCP server, on the MCP SDK's server: one per HTTP session or stdio client, bound to the bearer grant
 * that opened it. Each request runs as an effect of the host's runtime; the client's `notifications/cancelled` aborts
 * it, which ends exactly its request at the worker's server (C11).
 *
 * @internal
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  McpError,
  ResultSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Beyond from "./resources.js"
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import { UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import type { Readable, Writable } from "node:stream"
import * as Gateway from "./gateway.js"
import * as Questions from "./questions.js"
import * as ServeTasks from "./tasks.js"

// The longest delay a Node timer takes: an SDK request that waits on the host's own bound instead.
const maxTimer = 2 ** 31 - 1

/** The gateway's version, as both eras' servers announce it. @internal */
export const { version } = createRequire(import.meta.url)("../../../package.json") as { version: string }

/** Runs an effect of the host's runtime; aborting `signal` interrupts it. */
export type Run = <A, E>(effect: Effect.Effect<A, E>, options?: { readonly signal?: AbortSignal }) => Promise<A>

// The worker's server gets the client's `_meta` (its trace context, C83) but the gateway's own progress token.
const forwardedMeta = (meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
  if (meta === undefined) return undefined
  const { progressToken: _, ...rest } = meta
  return Object.keys(rest).length === 0 ? undefined : rest
}

/** Starts an effect in the layer's scope: it is interrupted when the gateway closes, if it has not ended before. */
export type Fork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>

/**
 * C139, C143: the client hears a list change when one of its workers announces one, and all of them when one ends
 * (its lists are gone); and `resources/updated` of a URI it subscribed to.
 */
const announceChanges = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  server: Server,
  subscribed: ReadonlySet<string>
): Effect.Effect<void> => {
  const announced = new Set(Beyond.listChanged)
  return Beyond.watch(
    gateway,
    bundle,
    (notification) =>
      announced.has(notification.method) ||
      (notification.method === "notifications/resources/updated" && subscribed.has(String(notification.params.uri))),
    (method, params) =>
      Effect.promise(() => server.notification({ method, ...(params && { params }) }).catch(() => undefined))
  )
}

/** How a handler's failure is raised: as the JSON-RPC error of the SDK that serves it. */
export type Raise = (error: { readonly code: number; readonly message: string; readonly data: unknown }) => Error

/** What a `tools/call` handler is given by the SDK that serves it. */
export interface CallContext {
  readonly signal: AbortSignal
  readonly notify: (notification: {
    method: "notifications/progress"
    params: Record<string, unknown>
  }) => Promise<void>
  /** The client's side of the call's questions, where the SDK can ask its client during a request (C151, C155). */
  readonly questions?: Omit<Questions.Caller, "ended"> | undefined
}

/**
 * The gateway's `tools/list` and `tools/call` for the bundle `bearer` names, whichever SDK serves them: the 2025-11-25
 * sessions here and the 2026-07-28 requests in `modern.ts` answer alike.
 *
 * @internal
 */
export const handlers = (gateway: Gateway.Gateway, bearer: string, run: Run, raise: Raise) => {
  const fail = (error: RequestError) => raise(Gateway.mcpErrorOf(error))
  const key = Gateway.bundleKeyOf(gateway, bearer)
  const bundle = (): Gateway.Bundle => {
    const found = key === undefined ? undefined : Gateway.heldBundle(gateway, key)
    if (found === undefined) throw fail(new UnknownWorker({ workerId: bearer, delivery: "not_sent" }))
    return found
  }
  const answered = async <A>(effect: Effect.Effect<A, RequestError>, signal: AbortSignal): Promise<A> => {
    const outcome = await run(Effect.either(effect), { signal })
    if (Either.isLeft(outcome)) throw fail(outcome.left)
    return outcome.right
  }
  const listTools = async () => ({ tools: [...(await run(Gateway.listTools(gateway, bundle())))] })
  const callTool = async (
    request: {
      readonly name: string
      readonly arguments?: Record<string, unknown> | undefined
      readonly _meta?: Record<string, unknown> | undefined
      readonly task?: Record<string, unknown> | undefined
    },
    context: CallContext
  ): Promise<CallToolResult> => {
    const route = Gateway.routeOf(gateway, bundle(), request.name)
    if (route === undefined) throw fail(Gateway.unknownTool(request.name))
    const [entry, tool] = route
    const meta = forwardedMeta(request._meta)
    const progressToken = request._meta?.progressToken
    const onProgress =
      progressToken === undefined
        ? undefined
        : (progress: { progress: number; total?: number | undefined; message?: string | undefined }) =>
            void context
              .notify({ method: "notifications/progress", params: { progressToken, ...progress } })
              .catch(() => undefined)
    const { task } = request
    const params = {
      name: tool,
      arguments: request.arguments ?? {},
      ...(task && { task }),
      ...(meta && { _meta: meta })
    }
    // C156: a task-augmented call starts the task through the grant, which keeps it as its own (C71).
    const operation = task === undefined ? "callTool" : "startTask"
    const ended = new AbortController()
    const ask = context.questions && Questions.askerOf({ ...context.questions, ended: ended.signal })
    const effect = Gateway.request(gateway, entry, operation, "tools/call", params, { onProgress, ask })
    try {
      return (await answered(effect, context.signal)) as CallToolResult
    } finally {
      ended.abort()
    }
  }
  /** Any other request of the bundle, answered as a tool call is. */
  const answer = <A>(request: (bundle: Gateway.Bundle) => Effect.Effect<A, RequestError>, signal: AbortSignal) =>
    answered(request(bundle()), signal)
  return { answer, listTools, callTool }
}

/** An MCP server of the bundle `bearer` names. @internal */
export const make = (gateway: Gateway.Gateway, bearer: string, run: Run, fork: Fork): Server => {
  const bundle = Gateway.bundleOf(gateway, bearer)
  const tasks = bundle !== undefined && ServeTasks.runsTasks(gateway, bundle)
  const served = Beyond.capabilitiesOf(gateway, bundle)
  const capabilities = tasks ? { ...served, ...ServeTasks.capabilities } : served
  const server = new Server({ name: "mcp-worker", version }, { capabilities })
  const subscribed = new Set<string>()
  if (bundle !== undefined) {
    const watching = fork(announceChanges(gateway, bundle, server, subscribed))
    server.onclose = () => void fork(Fiber.interruptFork(watching))
  }
  const { answer, callTool, listTools } = handlers(
    gateway,
    bearer,
    run,
    ({ code, data, message }) => new McpError(code, message, data)
  )
  if (capabilities.tools !== undefined) {
    server.setRequestHandler(ListToolsRequestSchema, listTools)
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      callTool(request.params, {
        signal: extra.signal,
        notify: (notification) => extra.sendNotification(notification),
        questions: {
          declared: () => server.getClientCapabilities(),
          // On the call's own stream (`relatedRequestId`), so it reaches the client that made the call; the host's
          // timeout bounds it, not the SDK's default.
          send: (question, signal) => extra.sendRequest(question as never, ResultSchema, { signal, timeout: maxTimer })
        }
      })
    )
  }
  // A grant gone since the session opened is refused as a tool call's is: its error, not a defect.
  Beyond.register(server, (request, signal) => answer(request, signal), gateway, capabilities, subscribed)
  if (tasks) ServeTasks.register(server, answer, gateway)
  return server
}

/**
 * The streams a stdio client is served on, as far as the server reads them: a Node `Readable` and `Writable` fit,
 * and the declarations name no Node type (C98).
 *
 * @internal
 */
export interface StdioStreams {
  readonly input: { on(event: string, listener: (...args: Array<any>) => void): unknown }
  readonly output: { write(chunk: string): unknown }
}

/** Serves `server` on `io` (default: this process's stdin and stdout) until the input ends. @internal */
export const serveStdio = (server: Server, io?: StdioStreams): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const input = (io?.input ?? process.stdin) as Readable
    const transport = new StdioServerTransport(input, (io?.output ?? process.stdout) as Writable)
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close())
    )
    yield* Effect.async<void>((resume) => {
      const done = () => resume(Effect.void)
      if (input.readableEnded || input.destroyed) return done()
      input.once("end", done).once("close", done)
      return Effect.sync(() => input.off("end", done).off("close", done))
    })
  })
