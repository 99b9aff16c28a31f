// The host's `McpWorkers` service as the tasks suites' surface (tasksSuite.ts stays free of Effect 3 imports: the
// Effect 4 workspace compiles it too).
import type { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import * as Effect from "effect/Effect"
import type { TaskSurface } from "./tasksSuite.js"

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
