// The fault matrix: servers, payloads and hosts that misbehave. Every row asserts what the caller gets AND that
// nothing of ours is left running: no server process (each row tags its servers with TEST_TAG) and no owner thread.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import { statefulConfig } from "../fixtures/servers.js"
import { activePorts, eventually, processesWithEnv, tag, withHost } from "./helpers.js"

/** Fails the test unless, within 3 s, no process tagged `testTag` lives and no owner thread beyond `ports` runs. */
const nothingLeft = (testTag: string, ports: number) =>
  Effect.promise(async () => {
    assert.isTrue(
      await eventually(() => processesWithEnv("TEST_TAG", testTag).length === 0),
      "a server process is left"
    )
    assert.isTrue(await eventually(() => activePorts() <= ports), "an owner thread is left")
  })

/** A server written inline: `node -e <script>`, tagged. */
const inline = (testTag: string, script: string) => ({
  command: process.execPath,
  args: ["-e", script],
  env: { TEST_TAG: testTag }
})

describe("faults", () => {
  describe("C28: a server that dies at start says why", () => {
    const diesAtStart = (name: string, script: string, exitCode: number, says: string) =>
      it.live(`C28: a server that dies at start says why (${name})`, () =>
        withHost(
          Effect.gen(function* () {
            const workers = yield* McpWorkers
            const testTag = tag()
            const ports = activePorts()
            const error = yield* Effect.flip(workers.open(inline(testTag, script)))
            assert.strictEqual(error._tag, "OpenFailed")
            if (error._tag !== "OpenFailed") return
            assert.strictEqual(error.stage, "initialize")
            assert.strictEqual(error.exitCode, exitCode)
            assert.include(error.stderrTail ?? "", says)
            assert.include(error.message, `code ${exitCode}`)
            yield* nothingLeft(testTag, ports)
          })
        )
      )

    diesAtStart("at once", "console.error('FATAL: API_TOKEN is not set'); process.exit(3)", 3, "API_TOKEN is not set")
    diesAtStart(
      "after 100 ms",
      "setTimeout(() => { console.error('FATAL: config file missing'); process.exit(4) }, 100)",
      4,
      "config file missing"
    )

    it.live("C28: a server that dies at start says why (after reading initialize)", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const error = yield* Effect.flip(
            workers.open({
              ...statefulConfig("--crash-on-initialize", "--stderr", "FATAL: refused the handshake"),
              env: { TEST_TAG: testTag }
            })
          )
          assert.strictEqual(error._tag, "OpenFailed")
          if (error._tag !== "OpenFailed") return
          assert.strictEqual(error.stage, "initialize")
          assert.strictEqual(error.exitCode, 7)
          assert.include(error.stderrTail ?? "", "refused the handshake")
          yield* nothingLeft(testTag, ports)
        })
      )
    )

    it.live("C28: a server killed by a signal at start reports the signal", () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const testTag = tag()
          const ports = activePorts()
          const error = yield* Effect.flip(
            workers.open(inline(testTag, "console.error('about to crash'); process.kill(process.pid, 'SIGSEGV')"))
          )
          assert.strictEqual(error._tag, "OpenFailed")
          if (error._tag !== "OpenFailed") return
          assert.strictEqual(error.stage, "initialize")
          assert.strictEqual(error.signal, "SIGSEGV")
          assert.isUndefined(error.exitCode)
          assert.include(error.stderrTail ?? "", "about to crash")
          yield* nothingLeft(testTag, ports)
        })
      )
    )
  })
})
