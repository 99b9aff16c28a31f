/**
 * What `NodeMcpWorkers` stands on: the host registry wired to the host server, as a scoped effect and as layers.
 *
 * @internal
 */
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Options } from "../NodeMcpWorkers.js"
import * as Host from "./host/layer.js"
import * as HostServer from "./host/server.js"
import * as Remote from "./remote/layer.js"

/** @internal */
export const make = (options: Options = {}): Effect.Effect<McpWorkers.McpWorkersService, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The server's channels are acquired before the registry, so they are released after it has closed every
    // worker: remote calls in flight are answered, then `Gone` is announced.
    const server = yield* HostServer.make
    const registry = yield* Host.make(options)
    yield* server.serve(registry)
    return McpWorkers.McpWorkers.of(registry.service)
  })

/** @internal */
export const layer = (options?: Options): Layer.Layer<McpWorkers.McpWorkers> =>
  Layer.scoped(McpWorkers.McpWorkers, make(options))

/** @internal */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<McpWorkers.McpWorkers, ConfigError.ConfigError> =>
  Layer.scoped(McpWorkers.McpWorkers, Effect.flatMap(Config.unwrap(config), make))

/** @internal */
export const layerRemote: Layer.Layer<McpWorkers.McpWorkers> = Remote.layer
