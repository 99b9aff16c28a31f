// C90: a server that takes longer than the era probe's window to answer its first request (a cold `npx`) opens
// within the caller's budget, on every era setting and every surface; a time-out says what it waited for. The same
// cases on a cluster run in clusterSuite.ts.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { slowStarts } from "../fixtures/servers.js"
import { eventually, processesWithEnv, structured, tag } from "./helpers.js"

// Longer than the 5 s an `auto` probe waits on stdio; the budget leaves room for a loaded machine.
const delayMs = 7_500
const budget = "20 seconds"

describe("C90: open waits as long as the caller allows", () => {
  it.live("a slow server opens on threads, owner processes and McpClient, on every era setting", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const viaHost = (isolation: "thread" | "process") => (config: (typeof slowStarts)[number]["config"]) =>
        Effect.gen(function* () {
          const id = yield* workers.open(config(delayMs), { timeout: budget, isolation })
          const status = yield* workers.status(id)
          // A call after the open: a late answer to the probe broke nothing.
          const echoed = yield* workers.callTool(id, "echo", { token: "after" })
          yield* workers.close(id)
          return { era: status.era, state: status.state, echoed: structured(echoed).token }
        })
      const viaClient = (config: (typeof slowStarts)[number]["config"]) =>
        Effect.scoped(
          Effect.gen(function* () {
            const client = yield* McpClient.make(config(delayMs), { timeout: budget })
            const status = yield* client.status
            const echoed = yield* client.callTool("echo", { token: "after" })
            return { era: status.era, state: status.state, echoed: structured(echoed).token }
          })
        )
      const surfaces = { thread: viaHost("thread"), process: viaHost("process"), client: viaClient }
      const cases = slowStarts.flatMap(({ protocol, config, era }) =>
        Object.entries(surfaces).map(([surface, run]) =>
          run(config).pipe(
            Effect.either,
            Effect.map((outcome) => ({
              what: `${surface} ${protocol}`,
              seen: (outcome._tag === "Right" ? outcome.right : outcome.left) as unknown,
              expected: { era, state: "ready", echoed: "after" }
            }))
          )
        )
      )
      for (const { what, seen, expected } of yield* Effect.all(cases, { concurrency: "unbounded" })) {
        assert.deepStrictEqual(seen, expected, what)
      }
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("a silent package runner times out naming the request it waited on and the network as the cause", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-npx-"))
      const npx = path.join(dir, "npx")
      fs.writeFileSync(npx, "#!/bin/sh\nexec sleep 60\n", { mode: 0o755 })
      const t = tag()
      const open = (protocol: "auto" | "2026-07-28") =>
        Effect.flip(workers.open({ command: npx, env: { TEST_TAG: t }, protocol }, { timeout: "2 seconds" }))
      const [auto, pinned] = yield* Effect.all([open("auto"), open("2026-07-28")], { concurrency: "unbounded" })
      fs.rmSync(dir, { recursive: true, force: true })
      for (const error of [auto, pinned]) {
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag !== "OpenFailed") continue
        assert.strictEqual(error.stage, "timeout")
        assert.include(error.message, "npx printed nothing: it may be waiting on the network (a proxy or a custom CA)")
        assert.include(error.message, "envFrom")
      }
      // auto fell back to initialize once the probe's window passed; a pinned era waited on the probe all along.
      assert.match(
        auto.message,
        /^the server did not complete initialize within \d+ ms, what was left of the open.s budget once the server had started;/
      )
      assert.match(
        pinned.message,
        /^the server did not answer server\/discover \(the era probe\) within \d+ ms, what was left of the open.s budget once the server had started;/
      )
      assert.isTrue(yield* Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", t).length === 0)))
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("a server that prints something is not blamed on the network; its output is the account", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const [config] = slowStarts
      const base = config.config(60_000)
      const error = yield* Effect.flip(
        workers.open({ ...base, args: [...base.args, "--stderr", "still booting"] }, { timeout: "1500 millis" })
      )
      assert.strictEqual(error._tag, "OpenFailed")
      if (error._tag !== "OpenFailed") return
      assert.strictEqual(error.stage, "timeout")
      assert.include(error.stderrTail ?? "", "still booting")
      assert.notInclude(error.message, "network")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})
