// C11
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
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import type { Readable, Writable } from "node:stream"
import * as Gateway from "./gateway.js"
import * as Questions from "./questions.js"
import * as ServeTasks from "./tasks.js"

// Node's longest timer: the host's own bound applies instead.
const maxTimer = 2 ** 31 - 1

/** @internal */
export const { version } = createRequire(import.meta.url)("../../../package.json") as { version: string }

export type Run = <A, E>(effect: Effect.Effect<A, E>, options?: { readonly signal?: AbortSignal }) => Promise<A>

// C83: the client's `_meta`, but the gateway's own progress token.
const forwardedMeta = (meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
  if (meta === undefined) return undefined
  const { progressToken: _, ...rest } = meta
  return Object.keys(rest).length === 0 ? undefined : rest
}

export type Fork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>

/** C139, C143 */
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

export type Raise = (error: { readonly code: number; readonly message: string; readonly data: unknown }) => Error

export interface CallContext {
  readonly signal: AbortSignal
  readonly notify: (notification: {
    method: "notifications/progress"
    params: Record<string, unknown>
  }) => Promise<void>
  /** C151, C170 */
  readonly questions?: Omit<Questions.Caller, "ended"> | undefined
}

/** @internal */
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
    // C156, C71
    const operation = task === undefined ? "callTool" : "startTask"
    // C151: a client that declared nothing it could be asked is asked nothing, so its call needs no asker.
    const questions = context.questions !== undefined && Questions.declaresAny(context.questions.declared())
    const ended = questions ? new AbortController() : undefined
    const ask = ended && Questions.askerOf({ ...context.questions!, ended: ended.signal })
    try {
      return (await called(entry, operation, params, { onProgress, ask }, context.signal)) as CallToolResult
    } finally {
      // A reason of its own: without one, each call would build a DOMException.
      ended?.abort(callEnded)
    }
  }
  // The most frequent request runs on the registry's callback, without a fiber; `signal` is the client's cancel (C135).
  const called = (
    entry: Gateway.Entry,
    operation: "callTool" | "startTask",
    params: Record<string, unknown>,
    extra: Gateway.Extra,
    signal: AbortSignal
  ): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      // Ended by the client, it has no answer to wait for: the host ends it at the server and stops hearing it.
      const onAbort = () => {
        end?.()
        reject(signal.reason)
      }
      const end = Gateway.begin(gateway, entry, operation, params, extra, (exit) => {
        signal.removeEventListener("abort", onAbort)
        if (Exit.isSuccess(exit)) return resolve(exit.value)
        const error = Cause.failureOption(exit.cause)
        reject(Option.isSome(error) ? fail(error.value) : Cause.squash(exit.cause))
      })
      if (end !== undefined) signal.addEventListener("abort", onAbort, { once: true })
    })
  const answer = <A>(request: (bundle: Gateway.Bundle) => Effect.Effect<A, RequestError>, signal: AbortSignal) =>
    answered(request(bundle()), signal)
  return { answer, listTools, callTool }
}

const callEnded = new Error("the call ended")

/** @internal */
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
          // On the call's own stream, so it reaches the caller; the host's timeout bounds it.
          send: (question, signal) => extra.sendRequest(question as never, ResultSchema, { signal, timeout: maxTimer })
        }
      })
    )
  }
  // A grant gone since the session opened fails as a tool call does, not as a defect.
  Beyond.register(server, (request, signal) => answer(request, signal), gateway, capabilities, subscribed)
  if (tasks) ServeTasks.register(server, answer, gateway)
  return server
}

/** C98 @internal */
export interface StdioStreams {
  readonly input: { on(event: string, listener: (...args: Array<any>) => void): unknown }
  readonly output: { write(chunk: string): unknown }
}

/** @internal */
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
