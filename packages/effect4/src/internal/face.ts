// The Effect 4 face over a surface of the implementation (the Promise host or the Promise client): every operation
// an Effect whose interruption aborts the call's signal and waits for the implementation to settle, so the exact
// cancel has reached the owner when the interruption completes; every rejection decoded into this package's errors.
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as McpWorkerError from "../McpWorkerError.js"
import type * as McpWorkers from "../McpWorkers.js"
import type * as NodeMcpWorkers from "../NodeMcpWorkers.js"
import type { WorkerStatus } from "../WorkerStatus.js"
import type * as Context from "effect/Context"
import type { Handler, RequestName, Surface } from "./implementation.js"

const errors: Record<string, new (fields: any) => McpWorkerError.McpWorkerError> = {
  UnknownWorker: McpWorkerError.UnknownWorker,
  WorkerBusy: McpWorkerError.WorkerBusy,
  WorkerFailed: McpWorkerError.WorkerFailed,
  DeliveryUnknown: McpWorkerError.DeliveryUnknown,
  ServerError: McpWorkerError.ServerError,
  InvalidInput: McpWorkerError.InvalidInput,
  OpenFailed: McpWorkerError.OpenFailed,
  CloseFailed: McpWorkerError.CloseFailed,
  RequestNotPending: McpWorkerError.RequestNotPending,
  HostUnavailable: McpWorkerError.HostUnavailable,
  ResultTooLarge: McpWorkerError.ResultTooLarge,
  DeadlineExceeded: McpWorkerError.DeadlineExceeded
}

const fieldsOf: Record<string, ReadonlyArray<string>> = Object.fromEntries(
  Object.entries(errors).map(([tag, error]) => [
    tag,
    Object.keys((error as unknown as { readonly fields: object }).fields).filter((key) => key !== "_tag")
  ])
)

/**
 * A rejection of the implementation as this package's tagged error (the same tag and fields), or `undefined` when
 * it is none of them.
 *
 * @internal
 */
export const decodeError = (error: unknown): McpWorkerError.McpWorkerError | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const tag = (error as { readonly _tag?: unknown })._tag
  const make = typeof tag === "string" ? errors[tag] : undefined
  if (make === undefined) return undefined
  const fields: Record<string, unknown> = {}
  for (const key of fieldsOf[tag as string]!) {
    const value = (error as Record<string, unknown>)[key]
    if (value !== undefined) fields[key] = value
  }
  return new make(fields)
}

/**
 * One call of the implementation as an Effect. Interrupting it aborts the call's signal and waits until the call
 * has settled: the implementation has then cancelled its request at the server.
 *
 * @internal
 */
export const call = <A, E>(f: (signal: AbortSignal) => Promise<unknown>): Effect.Effect<A, E> =>
  Effect.callback<A, E>((resume) => {
    const controller = new AbortController()
    const settled = f(controller.signal).then(
      (value) => resume(Effect.succeed(value as A)),
      (error) => {
        const decoded = decodeError(error)
        resume(decoded === undefined ? Effect.die(error) : Effect.fail(decoded as E))
      }
    )
    return Effect.promise(() => {
      controller.abort()
      return settled
    })
  })

/** @internal */
// A budget for the implementation: numbers and duration strings read the same in both Effects; anything else this
// Effect's `Duration` reads is converted to milliseconds, and what it cannot read is passed on to be refused there.
export const timeoutOf = (input: Duration.Input | undefined): unknown => {
  if (input === undefined || typeof input === "number" || typeof input === "string") return input
  const duration = Duration.fromInput(input)
  return duration._tag === "Some" ? Duration.toMillis(duration.value) : input
}

/**
 * The config with every `Redacted` revealed, at the moment it crosses into the implementation (which wraps each
 * secret in its own `Redacted` again as it reads the config).
 *
 * @internal
 */
export const revealSecrets = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return Redacted.value(value)
  if (Array.isArray(value)) return value.map(revealSecrets)
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) out[key] = revealSecrets((value as Record<string, unknown>)[key])
    return out
  }
  return value
}

const arities: Record<RequestName, number> = {
  listTools: 0,
  callTool: 2,
  listResources: 0,
  listResourceTemplates: 0,
  readResource: 1,
  subscribeResource: 1,
  unsubscribeResource: 1,
  listPrompts: 0,
  getPrompt: 2,
  complete: 1,
  ping: 0
}

// Span attributes: names only, never values that may be secret.
const attributesOf = (name: RequestName, id: string, args: ReadonlyArray<unknown>): Record<string, unknown> =>
  name === "callTool"
    ? { workerId: id, tool: args[0] }
    : name === "getPrompt"
      ? { workerId: id, prompt: args[0] }
      : { workerId: id }

/**
 * How a surface sends one request of the table: its name, the worker id, the positional arguments and the options
 * (with the call's signal).
 *
 * @internal
 */
export type Send = (
  name: RequestName,
  id: string,
  args: ReadonlyArray<unknown>,
  options: Record<string, unknown>
) => Promise<unknown>

const request = (send: Send, name: RequestName, prefix: string) => {
  const arity = arities[name]
  const span = `${prefix}.${name}`
  return (id: string, ...rest: Array<unknown>) => {
    // Every positional argument in its place (an optional one left out is `undefined`), then the options.
    const args = Array.from({ length: arity }, (_, i) => rest[i])
    const options = rest[arity] as McpWorkers.RequestOptions | undefined
    const timeout = timeoutOf(options?.timeout)
    return call((signal) => send(name, id, args, { ...options, timeout, signal })).pipe(
      Effect.withSpan(span, { attributes: attributesOf(name, id, args) }, { captureStackTrace: false })
    )
  }
}

/**
 * Every request of the table by worker id, each an Effect with its span (`<prefix>.<name>`).
 *
 * @internal
 */
export const requestsOf = (send: Send, prefix: string): McpWorkers.Requests =>
  Object.fromEntries(
    (Object.keys(arities) as Array<RequestName>).map((name) => [name, request(send, name, prefix)])
  ) as unknown as McpWorkers.Requests

/**
 * The service over a surface of the implementation.
 *
 * @internal
 */
export const make = (surface: Surface): McpWorkers.McpWorkersService => {
  const requests = requestsOf((name, id, args, options) => surface[name](id, ...args, options), "McpWorkers")
  return {
    ...requests,
    open: (config, options) =>
      call<string, any>(() =>
        surface.open(revealSecrets(config), {
          timeout: timeoutOf(options?.timeout) as number | string | undefined,
          isolation: options?.isolation,
          maxOldGenerationSizeMb: options?.maxOldGenerationSizeMb,
          tools: options?.tools
        })
      ).pipe(Effect.withSpan("McpWorkers.open")),
    status: (id) => call<WorkerStatus, any>(() => surface.status(id)),
    cancel: (id, requestId) =>
      call<void, any>(() => surface.cancel(id, requestId)).pipe(
        Effect.withSpan("McpWorkers.cancel", { attributes: { workerId: id } })
      ),
    close: (id, options) =>
      call<WorkerStatus, any>(() =>
        surface.close(id, { timeout: timeoutOf(options?.timeout) as number | string | undefined })
      ).pipe(Effect.withSpan("McpWorkers.close", { attributes: { workerId: id } })),
    events: (id, options) =>
      Stream.fromAsyncIterable(
        { [Symbol.asyncIterator]: () => surface.events(id, options) as AsyncIterator<McpWorkers.ServerNotification> },
        (error) => error
      ).pipe(
        Stream.catchCause((cause) => {
          const error = Cause.findErrorOption(cause)
          if (Option.isNone(error)) return Stream.failCause(cause as Cause.Cause<never>)
          const decoded = decodeError(error.value)
          return decoded === undefined
            ? Stream.die(error.value)
            : Stream.fail(decoded as McpWorkerError.UnknownWorker | McpWorkerError.InvalidInput)
        })
      )
  }
}

/**
 * Runs an effect of the application with the services it was given, as a Promise the signal interrupts.
 *
 * @internal
 */
export const runner =
  (context: Context.Context<never>) =>
  <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal): Promise<A> =>
    Effect.runPromiseWith(context)(effect, { signal })

/**
 * Effect handlers as the implementation's Promise handlers, run with `context`.
 *
 * @internal
 */
export const handlersIn = (
  context: Context.Context<never>,
  handlers: NodeMcpWorkers.Handlers | undefined
): { elicitation?: Handler | undefined; sampling?: Handler | undefined; roots?: Handler | undefined } | undefined => {
  if (handlers === undefined) return undefined
  const run = runner(context)
  const handler = (f: NodeMcpWorkers.Handler | undefined): Handler | undefined =>
    f === undefined ? undefined : (request, { signal }) => run(f(request), signal)
  return {
    elicitation: handler(handlers.elicitation),
    sampling: handler(handlers.sampling),
    roots: handler(handlers.roots)
  }
}
