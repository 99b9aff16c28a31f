// C9 past the SDK's own request timeout: a call longer than its 60 s default completes when the caller's budget
// allows it. It takes a minute of waiting and proves what the owner gives the SDK, the same on every Node, so CI runs
// it once (vitest.config.ts, nodeIndependent).
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import { statefulConfig } from "../fixtures/servers.js"
import { structured, withHost } from "./helpers.js"

describe("C9: a call longer than the SDK's default", () => {
  it.live(
    "C9: the SDK's own 60 s default never cuts in: a 65 s call completes under a 90 s budget",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const result = yield* workers.callTool(id, "sleep", { ms: 65_000, token: "long" }, { timeout: "90 seconds" })
          assert.strictEqual(structured(result).token, "long")
          const cancelled = structured(yield* workers.callTool(id, "cancelled")).cancelled as Array<unknown>
          assert.deepStrictEqual(cancelled, [])
        })
      ),
    { timeout: 100_000 }
  )
})
