// C2
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as SocketCaller from "@mcp-worker/caller/SocketCaller"
import { UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as HostView from "../metrics/view.js"
import type * as McpServeFace from "../../McpServe.js"
import * as Gateway from "./gateway.js"
import * as Hosts from "./hosts.js"

/** @internal */
export class McpServe extends Context.Tag("@mcp-worker/node/McpServe")<McpServe, McpServeFace.McpServeService>() {}

/** @internal */
export class ServeError extends Schema.TaggedError<ServeError>("@mcp-worker/node/ServeError")("ServeError", {
  reason: Schema.Literal("listen"),
  detail: Schema.String
}) {
  override get message(): string {
    return `the gateway cannot serve: ${this.detail}`
  }
}

const defaultMaxSessions = 256

const loadServer = Effect.promise(() => import("./mcpServer.js"))
const loadHttp = Effect.promise(() => Promise.all([import("./http.js"), import("./modern.js")]))

/** @internal */
export const layerServe = (options: McpServeFace.ServeOptions = {}) =>
  Layer.scoped(
    McpServe,
    Effect.gen(function* () {
      const view = yield* HostView.HostView
      const registry = Hosts.registryOf(view)
      if (registry === undefined) return yield* Effect.dieMessage("McpServe.layerServe needs a host's own view")
      const separator = yield* Gateway.checkSeparator(options.separator ?? "__")
      const gateway = Gateway.make(registry, separator)
      const runtime = yield* Effect.runtime<never>()
      const fork = yield* FiberSet.makeRuntime<never>()
      const Server = yield* loadServer
      // First on shutdown: what arrives while the host closes is refused unsent.
      yield* Effect.addFinalizer(() => Effect.sync(() => (gateway.closing = true)))
      const url =
        options.http === undefined
          ? undefined
          : yield* Effect.flatMap(loadHttp, ([Http, Modern]) =>
              Http.listen(gateway, {
                port: options.http?.port ?? 0,
                path: options.http?.path,
                maxSessions: options.maxSessions ?? defaultMaxSessions,
                maxBodyBytes: options.maxBodyBytes ?? SocketCaller.defaultMaxFrameBytes,
                serverOf: (bearer) => Server.make(gateway, bearer, Runtime.runPromise(runtime), fork),
                modern: Modern.make(gateway, Runtime.runPromise(runtime), fork)
              })
            )
      return McpServe.of({
        grant: (workers, grantOptions) => Gateway.grant(gateway, workers, grantOptions),
        revoke: (grant) => Gateway.revoke(gateway, grant),
        url,
        serveStdio: (grant, io) =>
          Gateway.bundleOf(gateway, grant) === undefined
            ? Effect.fail(new UnknownWorker({ workerId: grant, delivery: "not_sent" }))
            : Server.serveStdio(Server.make(gateway, grant, Runtime.runPromise(runtime), fork), io)
      })
    })
  )
