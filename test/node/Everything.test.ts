// The operations beyond tools against something nobody here wrote: the published server-everything over stdio,
// from the host and from a remote thread, with the server's requests answered by the host's handlers.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { everythingStdio } from "../fixtures/everything.js"
import { everythingAnswers, exerciseEverything, expectedEverything } from "./everythingSuite.js"
import type { Surface } from "./operationsSuite.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const everything = everythingStdio

const layer = NodeMcpWorkers.layer({
  handlers: {
    elicitation: () => Effect.succeed(everythingAnswers.elicitation),
    sampling: () => Effect.succeed(everythingAnswers.sampling),
    roots: () => Effect.succeed(everythingAnswers.roots)
  }
})

const entry = remoteEntry()

describe("against the published server-everything", () => {
  it.live("from the host", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(everything)
      const surface = Object.fromEntries(
        [...Object.keys(Operations.requests), "status"].map((name) => [
          name,
          (...args: Array<unknown>) =>
            Effect.runPromise(Effect.either((workers as any)[name](...args) as Effect.Effect<unknown, unknown>)).then(
              (either) => (either._tag === "Right" ? either.right : Promise.reject(either.left))
            )
        ])
      ) as unknown as Surface & { status: (id: string) => Promise<any> }
      assert.deepStrictEqual(yield* Effect.promise(() => exerciseEverything(surface, id)), expectedEverything)
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(layer))
  )

  it.live("from a remote thread (the server's requests still answered by the host's handlers)", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(everything)
      const outcome = yield* runInThread(entry(), { scenario: "everything", data: { id } })
      assert.isTrue(outcome.ok)
      assert.deepStrictEqual(outcome.ok ? outcome.value : null, expectedEverything)
    }).pipe(Effect.provide(layer))
  )
})
