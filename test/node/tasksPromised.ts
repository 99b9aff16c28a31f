// The host's `McpWorkers` service as the tasks suites' surface (tasksSuite.ts stays free of Effect 3 imports: the
// Effect 4 workspace compiles it too).
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { McpGrants, makePromiseClient, NodeMcpWorkers, type PromiseClient } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { socketPath } from "./listenSandbox.js"
import { clarification, type TaskSurface } from "./tasksSuite.js"

/** The host's answer to a task's question, in both tasks suites. */
export const handlers = { elicitation: () => Effect.succeed(clarification) }

/**
 * A listener with the same handlers, and a Promise client of this process connected to it (the sandbox tests of the
 * listener show the client behaves the same from another process).
 */
export const listening: Effect.Effect<
  {
    readonly mcp: PromiseClient.PromiseClient
    readonly workers: McpWorkers["Type"]
    readonly grants: McpGrants.McpGrantsService
  },
  unknown,
  Scope.Scope
> = Effect.gen(function* () {
  const socket = socketPath()
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
  const context = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, handlers }))
  const mcp = yield* Effect.acquireRelease(
    Effect.sync(() => makePromiseClient({ connect: socket.path })),
    (client) => Effect.promise(() => client.dispose())
  )
  return {
    mcp,
    workers: context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"],
    grants: context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
  }
})

/** Each operation of the table, and `status`, as a Promise that rejects with the failure itself. */
export const promised = (workers: McpWorkers["Type"]): TaskSurface =>
  Object.fromEntries(
    [...Object.keys(Operations.requests), "status"].map((name) => [
      name,
      (...args: Array<unknown>) =>
        Effect.runPromise(Effect.either((workers as any)[name](...args) as Effect.Effect<unknown, unknown>)).then(
          (either) => (either._tag === "Right" ? either.right : Promise.reject(either.left))
        )
    ])
  ) as unknown as TaskSurface
