/** @internal */
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Plane from "@mcp-worker/caller/Plane"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as NodeMcpWorkers from "../NodeMcpWorkers.js"
import type { SignalOption } from "./host/registry.js"
import { layer } from "./nodeMcpWorkers.js"
import { agentHostOf, exitOf, openOptions } from "./promiseEffect.js"
import type * as PromiseClient from "../PromiseClient.js"
import type { Handler, Handlers, LogEntry, Options, PromiseHost } from "../PromiseHost.js"
import type { OAuthProvider } from "../PromiseHost.js"

// C66: the host's requests take their caller's signal; the service's type does not say so.
type HostRequests = Operations.Service<Operations.Requests, SignalOption>

const duration = (timeout: PromiseClient.Timeout | undefined) => timeout as Duration.DurationInput | undefined

// The host's dispose, or a signal aborted before the request was sent.
const rejection = (cause: Cause.Cause<unknown>, signal: AbortSignal | undefined): unknown =>
  Option.getOrElse(Cause.failureOption(cause), () =>
    Cause.isInterruptedOnly(cause) && signal?.aborted === true ? signal.reason : Cause.squash(cause)
  )

const handler =
  (f: Handler): NodeMcpWorkers.Handler =>
  (request) =>
    Effect.tryPromise({ try: (signal) => f(request, { signal }), catch: (error) => error })

/** @internal */
export const handlersOf = (handlers: Handlers | undefined): NodeMcpWorkers.Handlers | undefined =>
  handlers === undefined
    ? undefined
    : {
        elicitation: handlers.elicitation === undefined ? undefined : handler(handlers.elicitation),
        sampling: handlers.sampling === undefined ? undefined : handler(handlers.sampling),
        roots: handlers.roots === undefined ? undefined : handler(handlers.roots)
      }

const oauthOf = (oauth: OAuthProvider | undefined): NodeMcpWorkers.OAuthProvider | undefined => {
  if (oauth === undefined) return undefined
  const { authorize, tokens, saveTokens, ...settings } = oauth
  return {
    ...settings,
    authorize: (request) => Effect.tryPromise({ try: (signal) => authorize(request, { signal }), catch: (e) => e }),
    tokens:
      tokens === undefined
        ? undefined
        : (serverUrl) => Effect.tryPromise({ try: (signal) => tokens(serverUrl, { signal }), catch: (e) => e }),
    saveTokens:
      saveTokens === undefined
        ? undefined
        : (serverUrl, value) =>
            Effect.tryPromise({ try: (signal) => saveTokens(serverUrl, value, { signal }), catch: (e) => e })
  }
}

const messageOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : JSON.stringify(part)))
    .join(" ")

// The application's own logger decides what it keeps.
const sinkLayer = (log: (entry: LogEntry) => void): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ annotations, cause, date, logLevel, message, spans }) => {
        const spanStarts: Record<string, number> = {}
        for (const span of spans) spanStarts[span.label] = span.startTime
        const annotated: Record<string, unknown> = {}
        for (const [key, value] of annotations) annotated[key] = value
        log({
          level: logLevel._tag === "All" || logLevel._tag === "None" ? "Info" : logLevel._tag,
          message: messageOf(message),
          annotations: annotated,
          spans: spanStarts,
          date,
          cause: Cause.isEmpty(cause) ? undefined : Cause.pretty(cause)
        })
      })
    ),
    Logger.minimumLogLevel(LogLevel.All)
  )

const registryOptions = (options: Options): NodeMcpWorkers.Options => ({
  requestTimeout: duration(options.requestTimeout),
  openTimeout: duration(options.openTimeout),
  closeTimeout: duration(options.closeTimeout),
  maxResultBytes: options.maxResultBytes,
  logLevel: options.logLevel === undefined ? undefined : LogLevel.fromLiteral(options.logLevel),
  handlers: handlersOf(options.handlers),
  oauth: oauthOf(options.oauth),
  metrics: options.metrics,
  treeSampleInterval: duration(options.treeSampleInterval)
})

/** @internal */
export const makePromiseHost = async (options: Options = {}): Promise<PromiseHost> => {
  const registry = layer(registryOptions(options))
  const runtime = ManagedRuntime.make(
    options.log === undefined ? registry : Layer.provide(registry, sinkLayer(options.log))
  )
  const workers = await runtime.runPromise(McpWorkers.McpWorkers)

  // C66: only a request aborted before the call is refused here.
  const run = <A>(effect: Effect.Effect<A, unknown>, signal?: AbortSignal): Promise<A> =>
    signal?.aborted === true
      ? Promise.reject(signal.reason)
      : exitOf(runtime, effect).then((exit) =>
          Exit.isSuccess(exit) ? exit.value : Promise.reject(rejection(exit.cause, signal))
        )

  const requests = Object.fromEntries(
    Object.entries(Operations.requests).map(([name, operation]) => [
      name,
      (id: string, ...rest: Array<unknown>) => {
        const { signal, timeout, ...options } = (rest[operation.arity] ?? {}) as PromiseClient.RequestOptions
        const args = Array.from({ length: operation.arity }, (_, i) => rest[i])
        const request = workers[name as keyof Operations.Requests] as (
          ...all: Array<unknown>
        ) => Effect.Effect<unknown, unknown>
        return run(request(id, ...args, { ...options, timeout: duration(timeout), signal }), signal)
      }
    ])
  ) as unknown as PromiseClient.Requests

  const events: PromiseHost["events"] = (id, eventsOptions) => {
    const scope = Effect.runSync(Scope.make())
    const pulling = exitOf(runtime, Scope.extend(Stream.toPull(workers.events(id, eventsOptions)), scope))
    let buffered: Array<McpWorkers.ServerNotification> = []
    let finished = false
    const finish = async (): Promise<IteratorResult<McpWorkers.ServerNotification>> => {
      if (!finished) {
        finished = true
        buffered = []
        await runtime.runPromise(Scope.close(scope, Exit.void)).catch(() => {})
      }
      return { done: true, value: undefined }
    }
    const next = async (): Promise<IteratorResult<McpWorkers.ServerNotification>> => {
      while (!finished) {
        const item = buffered.shift()
        if (item !== undefined) return { done: false, value: item }
        const pull = await pulling
        if (Exit.isFailure(pull)) {
          await finish()
          throw rejection(pull.cause, undefined)
        }
        const exit = await exitOf(runtime, pull.value)
        if (Exit.isSuccess(exit)) {
          buffered = Array.from(exit.value)
          continue
        }
        await finish()
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && Option.isNone(failure.value)) break
        throw rejection(Cause.map(exit.cause, Option.getOrUndefined), undefined)
      }
      return { done: true, value: undefined }
    }
    return Plane.eventsIterator(next, finish)
  }

  const dispose = () => runtime.dispose()

  return {
    open: (config, options) => run(workers.open(config, openOptions(options))),
    ...requests,
    ...agentHostOf(
      (signal, f) => run(f(workers), signal),
      requests,
      (service, id, page, signal) => (service.listTools as HostRequests["listTools"])(id, { ...page, signal })
    ),
    status: (id) => run(workers.status(id)),
    cancel: (id, requestId) => run(workers.cancel(id, requestId)),
    close: (id, closeOptions) => run(workers.close(id, { timeout: duration(closeOptions?.timeout) })),
    events,
    dispose,
    [Symbol.asyncDispose]: dispose
  }
}
