/**
 * One MCP connection for the life of a scope, in the calling thread: no owner thread, no id to pass around, the same
 * rules as a worker (one request at a time, the caller's whole budget, an exact cancel on timeout, interruption or
 * `cancel`, no reconnect) and, when the scope closes, the server's whole process tree ended and confirmed gone.
 *
 * ```ts
 * const tools = yield* McpClient.withClient(config, (client) => client.listTools())
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as CallerOptions from "../lib/caller/Options.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Face from "./internal/face.js"
import * as Implementation from "./internal/implementation.js"
import type { InvalidInput, OpenFailed, RequestError, RequestNotPending } from "./McpWorkerError.js"
import type * as McpWorkers from "./McpWorkers.js"
import type { Handlers } from "./NodeMcpWorkers.js"
import type { WorkerStatus } from "./WorkerStatus.js"

/**
 * Options of `make` and `withClient`. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Client<Duration.Input, Handlers, McpWorkers.ToolFilter> {}

type WithoutId<F> = F extends (id: string, ...rest: infer Rest) => infer A ? (...rest: Rest) => A : never

/**
 * Every request of the operation table on this connection: the same arguments as on `McpWorkers`, without the id.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = {
  readonly [K in Exclude<keyof McpWorkers.Requests, "callTool">]: WithoutId<McpWorkers.Requests[K]>
} & {
  readonly callTool: {
    (
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: McpWorkers.CallToolOptions & { readonly saveTo: string }
    ): Effect.Effect<McpWorkers.SavedResult, RequestError>
    (
      name: string,
      args?: { readonly [key: string]: unknown },
      options?: McpWorkers.CallToolOptions
    ): Effect.Effect<McpWorkers.CallToolResult, RequestError>
  }
}

/**
 * One open connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient extends Requests {
  /** A fresh id naming this connection in errors and its status (it is not registered anywhere). */
  readonly workerId: string
  /** The connection's status, in the shape of a worker's. */
  readonly status: Effect.Effect<WorkerStatus>
  /** Cancels exactly the request in flight named (`DeliveryUnknown{reason: "cancelled"}` for its caller). */
  readonly cancel: (requestId: string) => Effect.Effect<void, RequestNotPending | InvalidInput>
}

const fromScoped = (client: Implementation.ScopedClient): McpClient => {
  const byId = Face.requestsOf((name, _id, args, options) => client[name](...args, options), "McpClient")
  const requests = Object.fromEntries(
    Object.entries(byId).map(([name, f]) => [
      name,
      (...rest: Array<unknown>) => (f as (...all: Array<unknown>) => unknown)(client.workerId, ...rest)
    ])
  ) as unknown as Requests
  return {
    ...requests,
    workerId: client.workerId,
    status: Face.call<WorkerStatus, never>(() => client.status()).pipe(Effect.orDie),
    cancel: (requestId) => Face.call<void, RequestNotPending>(() => client.cancel(requestId))
  }
}

/**
 * Opens one connection in the current scope; it closes when the scope closes — success, failure or interruption —
 * with the server's whole process tree ended and confirmed (a close that cannot confirm it is logged).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: McpWorkers.ServerConfig,
  options: Options = {}
): Effect.Effect<McpClient, OpenFailed | InvalidInput, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<never>()
    const implementation = yield* Effect.promise(Implementation.loadClient)
    const handlers = implementation.handlersOf(Face.handlersIn(context, options.handlers))
    // The connection lives while the callback of `withClient` waits; the scope's end lets it return.
    const opened = yield* Effect.acquireRelease(
      Effect.callback<
        {
          readonly client: Implementation.ScopedClient
          readonly release: () => void
          readonly whole: Promise<unknown>
        },
        OpenFailed | InvalidInput
      >((resume) => {
        let release = () => {}
        const released = new Promise<void>((resolve) => {
          release = resolve
        })
        let handedOut = false
        const whole: Promise<unknown> = implementation.withClient(
          Face.revealSecrets(config),
          (client) => {
            handedOut = true
            resume(Effect.succeed({ client, release, whole }))
            return released
          },
          {
            timeout: Face.timeoutOf(options.timeout) as number | string | undefined,
            requestTimeout: Face.timeoutOf(options.requestTimeout) as number | string | undefined,
            closeTimeout: Face.timeoutOf(options.closeTimeout) as number | string | undefined,
            maxResultBytes: options.maxResultBytes,
            handlers,
            tools: options.tools
          }
        )
        whole.catch((error) => {
          if (handedOut) return
          resume(Face.failureOf<OpenFailed | InvalidInput>(error))
        })
        // Interrupted while opening: the connection, once open, closes at once.
        return Effect.promise(() => {
          release()
          return whole.then(
            () => {},
            () => {}
          )
        })
      }),
      ({ release, whole }) =>
        Effect.promise(() => {
          release()
          return whole.then(
            () => undefined,
            (error: unknown) => error
          )
        }).pipe(
          Effect.flatMap((error) =>
            error === undefined
              ? Effect.void
              : Effect.logWarning("mcp-worker: a connection's cleanup could not be confirmed").pipe(
                  Effect.annotateLogs({ error: Face.tagOf(error) ?? "defect" })
                )
          )
        )
    )
    return fromScoped(opened.client)
  })

/**
 * Runs `f` with a connection open for it alone, closed (cleanup confirmed) as soon as `f` ends, however it ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withClient = <A, E, R>(
  config: McpWorkers.ServerConfig,
  f: (client: McpClient) => Effect.Effect<A, E, R>,
  options?: Options
): Effect.Effect<A, E | OpenFailed | InvalidInput, Exclude<R, Scope.Scope>> =>
  Effect.scoped(Effect.flatMap(make(config, options), f))
