// C69: an interrupted call waits for the implementation to settle, so its exact cancel reached the owner.
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as McpWorkerError from "../McpWorkerError.js"
import type * as McpWorkers from "../McpWorkers.js"
import type * as NodeMcpWorkers from "../NodeMcpWorkers.js"
import type * as Context from "effect/Context"
import type * as Implementation from "./implementation.js"
import type { Handler, RequestName } from "./implementation.js"

const decodeRejection = Schema.decodeUnknownExit(McpWorkerError.McpWorkerError)

const tags: ReadonlySet<string> = new Set(
  McpWorkerError.McpWorkerError.members.map((member) => String(member.fields._tag.ast.literal))
)

/** @internal */
export const tagOf = (u: unknown): string | undefined => {
  const tag = typeof u === "object" && u !== null ? (u as { _tag?: unknown })._tag : undefined
  return typeof tag === "string" && tags.has(tag) ? tag : undefined
}

/** C69 @internal */
export class UndecodableError extends Error {
  override readonly name = "UndecodableError"
  constructor(
    readonly tag: string,
    readonly issue: string,
    override readonly cause: unknown
  ) {
    super(`@mcp-worker/effect4 cannot read a ${tag} of the implementation: ${issue}`)
  }
}

/** Total: it never throws. @internal */
export const decodeError = (error: unknown): Result.Result<McpWorkerError.McpWorkerError, unknown> => {
  const tag = tagOf(error)
  if (tag === undefined) return Result.fail(error)
  const decoded = decodeRejection(error)
  if (Exit.isSuccess(decoded)) return Result.succeed(decoded.value)
  const issue = Cause.findErrorOption(decoded.cause)
  return Result.fail(new UndecodableError(tag, Option.isSome(issue) ? issue.value.message : "unreadable", error))
}

/** C69 @internal */
export const failureOf = <E>(error: unknown): Effect.Effect<never, E> => {
  const decoded = decodeError(error)
  return Result.isSuccess(decoded) ? Effect.fail(decoded.success as E) : Effect.die(decoded.failure)
}

/** C69; a late value goes to `abandoned`. @internal */
export const call = <A, E>(
  f: (signal: AbortSignal) => Promise<unknown>,
  abandoned?: (value: unknown) => Promise<unknown>
): Effect.Effect<A, E> =>
  Effect.callback<A, E>((resume) => {
    const controller = new AbortController()
    let waiting = true
    const settled = new Promise<unknown>((resolve) => resolve(f(controller.signal))).then(
      (value) => (waiting ? resume(Effect.succeed(value as A)) : abandoned?.(value)),
      (error) => (waiting ? resume(failureOf<E>(error)) : undefined)
    )
    return Effect.promise(() => {
      waiting = false
      controller.abort()
      return settled.catch(() => undefined)
    })
  })

/** Other `Duration` inputs become ms; the implementation refuses what it cannot read. @internal */
export const timeoutOf = (input: Duration.Input | undefined): unknown => {
  if (input === undefined || typeof input === "number" || typeof input === "string") return input
  const duration = Duration.fromInput(input)
  return duration._tag === "Some" ? Duration.toMillis(duration.value) : input
}

/** The implementation wraps each secret in its own `Redacted` again. @internal */
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

/** The implementation checks every option. @internal */
export const requestOptionsOf = (
  options:
    | {
        readonly timeout?: Duration.Input | undefined
        readonly idleTimeout?: Duration.Input | undefined
        readonly ttl?: Duration.Input | undefined
      }
    | undefined,
  signal: AbortSignal
): Record<string, unknown> => ({
  ...options,
  timeout: timeoutOf(options?.timeout),
  ...(options?.idleTimeout === undefined ? {} : { idleTimeout: timeoutOf(options.idleTimeout) }),
  ...(options?.ttl === undefined ? {} : { ttl: timeoutOf(options.ttl) }),
  signal
})

/** @internal */
export const openOptionsOf = (options: McpWorkers.OpenOptions | undefined): Implementation.OpenOptions | undefined =>
  options === undefined ? undefined : { ...options, timeout: timeoutOf(options.timeout) as Implementation.Timeout }

/** A test checks core's table against it. @internal */
export const arities: Record<RequestName, number> = {
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
  ping: 0,
  startTask: 2,
  getTask: 1,
  taskResult: 1,
  cancelTask: 1,
  listTasks: 0
}

/** Never values that may be secret. @internal */
export const attributesOf = (name: RequestName, id: string, args: ReadonlyArray<unknown>): Record<string, unknown> =>
  name === "callTool" || name === "startTask"
    ? { workerId: id, tool: args[0] }
    : name === "getPrompt"
      ? { workerId: id, prompt: args[0] }
      : { workerId: id }

/** @internal */
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
    // An omitted optional argument is `undefined`, so each keeps its place.
    const args = Array.from({ length: arity }, (_, i) => rest[i])
    const options = rest[arity] as McpWorkers.RequestOptions | undefined
    return call((signal) => send(name, id, args, requestOptionsOf(options, signal))).pipe(
      Effect.withSpan(span, { attributes: attributesOf(name, id, args) }, { captureStackTrace: false })
    )
  }
}

/** @internal */
export const requestsOf = (send: Send, prefix: string): McpWorkers.Requests =>
  Object.fromEntries(
    (Object.keys(arities) as Array<RequestName>).map((name) => [name, request(send, name, prefix)])
  ) as unknown as McpWorkers.Requests

/** @internal */
export const runner =
  (context: Context.Context<never>) =>
  <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal): Promise<A> =>
    Effect.runPromiseWith(context)(effect, { signal })

/** @internal */
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
