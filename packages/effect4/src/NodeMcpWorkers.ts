/**
 * The Node.js layers of `McpWorkers` for Effect 4: the host registry (`layer`, `layerConfig`, `make`) and the remote
 * client of any other thread (`layerRemote`). They run mcp-worker's one implementation, bundled privately with its
 * own Effect 3 runtime; the application sees Effect 4 values only.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import type * as CallerOptions from "../lib/caller/Options.js"
import * as Face from "./internal/face.js"
import * as Service from "./internal/service.js"
import * as Implementation from "./internal/implementation.js"
import { McpWorkers } from "./McpWorkers.js"

/**
 * A server's request to its client, as the host's handler gets it: which worker, and the raw request params.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerRequest = Implementation.ServerRequest

/**
 * A handler: the raw result to answer with (JSON plain data), or a failure. It runs in the host's thread with the
 * services the layer was built with, and is interrupted when the answer is no longer wanted.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (request: ServerRequest) => Effect.Effect<unknown, unknown>

/**
 * The host's handlers of server requests; a worker's client declares a capability only when its handler is given.
 *
 * @since 0.1.0
 * @category models
 */
export type Handlers = {
  readonly [K in keyof NonNullable<Implementation.HostOptions["handlers"]>]?: Handler | undefined
}

/**
 * The host's interactive OAuth client: plain-data settings for the owner, and effects that run in the host.
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuthProvider extends CallerOptions.OAuthSettings {
  /** Takes the user through `authorizationUrl`; succeeds with the code the redirect brought back. */
  readonly authorize: (request: {
    readonly workerId: string
    readonly authorizationUrl: string
  }) => Effect.Effect<string, unknown>
  readonly tokens?: ((serverUrl: string) => Effect.Effect<unknown, unknown>) | undefined
  readonly saveTokens?: ((serverUrl: string, tokens: unknown) => Effect.Effect<void, unknown>) | undefined
}

/**
 * Defaults of a host registry. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Host<Duration.Input, LogLevel.LogLevel, Handlers, OAuthProvider> {}

type Timeout = number | string

const budgetOf = (input: Duration.Input | undefined): Timeout | undefined =>
  Face.timeoutOf(input) as Timeout | undefined

const levelOf = (level: LogLevel.LogLevel | undefined) => (level === "Warn" ? "Warning" : level)

// The implementation's log lines, logged again in this runtime: the application's logger and minimum level apply.
const logTo =
  (context: Context.Context<never>) =>
  (entry: Implementation.LogEntry): void => {
    const annotations = entry.cause === undefined ? entry.annotations : { ...entry.annotations, cause: entry.cause }
    Effect.runSyncWith(context)(
      Effect.logWithLevel(entry.level === "Warning" ? "Warn" : entry.level)(entry.message).pipe(
        Effect.annotateLogs(annotations)
      )
    )
  }

const hostOptions = (options: Options, context: Context.Context<never>): Implementation.HostOptions => {
  const run = Face.runner(context)
  const oauth = options.oauth
  return {
    requestTimeout: budgetOf(options.requestTimeout),
    openTimeout: budgetOf(options.openTimeout),
    closeTimeout: budgetOf(options.closeTimeout),
    maxResultBytes: options.maxResultBytes,
    logLevel: levelOf(options.logLevel),
    metrics: options.metrics,
    treeSampleInterval: budgetOf(options.treeSampleInterval),
    handlers: Face.handlersIn(context, options.handlers),
    oauth:
      oauth === undefined
        ? undefined
        : {
            ...oauth,
            authorize: (request, { signal }) => run(oauth.authorize(request), signal),
            tokens: oauth.tokens === undefined ? undefined : (url, { signal }) => run(oauth.tokens!(url), signal),
            saveTokens:
              oauth.saveTokens === undefined
                ? undefined
                : (url, tokens, { signal }) => run(oauth.saveTokens!(url, tokens), signal)
          },
    log: logTo(context)
  }
}

/**
 * Builds the host registry in the current scope: it owns every owner thread, serves the remote threads of the
 * process, and closing the scope closes every worker. Options that are not valid budgets are a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<McpWorkers["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<never>()
    const implementation = yield* Effect.promise(Implementation.load)
    const host = yield* Effect.acquireRelease(
      Effect.promise(() => implementation.makePromiseHost(hostOptions(options, context))),
      (host) => Effect.promise(() => host.dispose())
    )
    return Service.make(host)
  })

/**
 * The host registry as a layer. Build it once per process (normally in the main thread); its finalizer closes every
 * worker.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<McpWorkers> => Layer.effect(McpWorkers, make(options))

/**
 * The host registry with its defaults read from `Config` (for example `{ requestTimeout:
 * Config.duration("MCP_REQUEST_TIMEOUT").pipe(Config.withDefault("30 seconds")) }`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (config: Config.Wrap<Options>): Layer.Layer<McpWorkers, Config.ConfigError> =>
  Layer.effect(McpWorkers, Effect.flatMap(Config.unwrap(config), make))

/**
 * `McpWorkers` for any other thread (a `worker_thread`, an agent's `execute_code` run) of a process that runs a
 * host registry in some thread (this package's `layer`, or `@mcp-worker/node`'s): the same workers, by the same
 * ids. With no host running, every operation fails within 1 s with `HostUnavailable`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRemote: Layer.Layer<McpWorkers> = Layer.effect(
  McpWorkers,
  Effect.gen(function* () {
    const implementation = yield* Effect.promise(Implementation.load)
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => implementation.makePromiseClient()),
      (client) => Effect.promise(() => client.dispose())
    )
    return Service.make(client)
  })
)
