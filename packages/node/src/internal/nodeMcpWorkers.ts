/** @internal */
import { UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Context from "effect/Context"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Scope from "effect/Scope"
import type * as McpGrantsFace from "../McpGrants.js"
import type { ConnectOptions, ListenOptions, Options } from "../NodeMcpWorkers.js"
import * as Host from "./host/service.js"
import * as HostServer from "./thread/server.js"
import * as Grants from "./listen/grants.js"
import type { ListenError } from "./listen/socketFile.js"
import * as Remote from "./thread/client.js"
import * as HostView from "./metrics/view.js"
import * as ServeHosts from "./serve/hosts.js"

/** @internal */
export const make = (options: Options = {}): Effect.Effect<McpWorkers.McpWorkersService, never, Scope.Scope> =>
  Effect.gen(function* () {
    // After the registry closed every worker: calls in flight are answered, then `Gone` goes out.
    const server = yield* HostServer.make
    const registry = yield* Host.make(options)
    yield* server.serve(registry)
    return McpWorkers.McpWorkers.of(registry.service)
  })

/** @internal */
export const layer = (options?: Options): Layer.Layer<McpWorkers.McpWorkers> =>
  Layer.scoped(McpWorkers.McpWorkers, make(options))

/** C82 @internal */
export const layerWithView = (options?: Options): Layer.Layer<McpWorkers.McpWorkers | HostView.HostView> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const server = yield* HostServer.make
      const registry = yield* Host.make(options)
      yield* server.serve(registry)
      return withView(registry)
    })
  )

// C118
const withView = (registry: Host.HostRegistry) => {
  ServeHosts.remember(registry)
  return Context.make(McpWorkers.McpWorkers, registry.service).pipe(Context.add(HostView.HostView, registry.view))
}

/** @internal */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<McpWorkers.McpWorkers, ConfigError.ConfigError> =>
  Layer.scoped(McpWorkers.McpWorkers, Effect.flatMap(Config.unwrap(config), make))

/** @internal */
export const layerRemote: Layer.Layer<McpWorkers.McpWorkers> = Remote.layer

const grantsService = (registry: Host.HostRegistry, grants: Grants.Grants): McpGrantsFace.McpGrantsService => ({
  grant: (id, options) =>
    Effect.flatMap(registry.service.status(id), () =>
      Effect.suspend(() => {
        const now = Date.now()
        Grants.sweep(grants, registry.isOpen, now)
        return Grants.issue(grants, id, options, now)
      })
    ).pipe(Effect.catchTag("HostUnavailable", (error) => Effect.die(error))),
  revoke: (grant) =>
    Effect.suspend(() =>
      Grants.revoke(grants, grant)
        ? Effect.void
        : Effect.fail(new UnknownWorker({ workerId: grant, delivery: "not_sent" }))
    )
})

// C2: `@effect/rpc` loads msgpackr, which probes for a native extension.
const loadListener = Effect.promise(() => import("./listen/server.js"))
const loadClient = Effect.promise(() => import("./listen/client.js"))

/** @internal */
export const layerListen = (
  options: ListenOptions & Options
): Layer.Layer<McpWorkers.McpWorkers | Grants.McpGrants | HostView.HostView, ListenError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      // After the registry closed every worker, so calls in flight are answered.
      const listenScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      const server = yield* HostServer.make
      const registry = yield* Host.make(options)
      yield* server.serve(registry)
      const grants = Grants.make()
      const Listener = yield* loadListener
      const running = yield* Listener.make(registry, grants, options).pipe(Scope.extend(listenScope))
      // First on shutdown: calls that arrive while workers close are refused, not sent.
      yield* Effect.addFinalizer(() => Effect.sync(running.stop))
      return withView(registry).pipe(Context.add(Grants.McpGrants, grantsService(registry, grants)))
    })
  )

/** @internal */
export const layerConnect = (options: ConnectOptions): Layer.Layer<McpWorkers.McpWorkers> =>
  Layer.scoped(
    McpWorkers.McpWorkers,
    Effect.flatMap(loadClient, (client) => client.make(options))
  )
