// The Effect 4 face against real fixture servers and real threads: the root behaviour suite (busy, budget, cancel,
// a caller who stops waiting), typed errors caught by tag, interruption as the exact cancel, events as a Stream, use
// from a remote thread through layerRemote, handlers and log lines in the application's runtime, Redacted secrets,
// Config-driven options, and close with confirmed cleanup.
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import { McpWorkers } from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import { statefulConfig } from "../../../test/fixtures/servers.js"
import { type Outcome, remoteEntry, runInThread } from "./remoteThread.js"
import { expectedTyped, typedScenario, structured } from "./scenarios.js"
import { abortedByInterruption, effect4Surface, exerciseBehaviour, expectedBehaviour } from "./surface.js"

const entry = remoteEntry()

// A thread's value, once its scenario succeeded (else the test fails with the thread's cause).
const succeeded = (outcome: Outcome): unknown => {
  assert.isTrue(outcome.ok, outcome.ok ? "" : outcome.error)
  return outcome.ok ? outcome.value : undefined
}
const stateful = () => statefulConfig("--exit-on-stdin-eof")
const withHost = <A, E>(effect: Effect.Effect<A, E, McpWorkers>, options?: NodeMcpWorkers.Options) =>
  Effect.provide(effect, NodeMcpWorkers.layer(options))

describe("the Effect 4 face", () => {
  it.live("follows the request rules of every surface (the behaviour suite)", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful())
        const seen = yield* Effect.promise(() => exerciseBehaviour(effect4Surface(workers), id))
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByInterruption))
      })
    )
  )

  it.live("WorkerBusy and DeliveryUnknown by tag, interruption as the exact cancel, events as a Stream", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful())
        assert.deepStrictEqual<unknown>(yield* typedScenario(id), expectedTyped)
      })
    )
  )

  it.live("a remote thread: the behaviour suite, the typed scenario, open and close through layerRemote", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const direct = yield* workers.open(stateful())
        const relayed = yield* workers.open(stateful())
        const behaviour = yield* runInThread(entry(), "behaviour", { direct, relayed })
        assert.deepStrictEqual(succeeded(behaviour), {
          direct: expectedBehaviour(abortedByInterruption),
          relayed: expectedBehaviour(abortedByInterruption)
        })
        const id = yield* workers.open(stateful())
        assert.deepStrictEqual(succeeded(yield* runInThread(entry(), "typed", { id })), expectedTyped)
        assert.deepStrictEqual(succeeded(yield* runInThread(entry(), "openAndClose", { config: stateful() })), {
          count: 2,
          cleanup: 0,
          afterClose: "UnknownWorker"
        })
      })
    )
  )

  it.live(
    "close confirms cleanup; the id is then UnknownWorker, and a remote without a host gets HostUnavailable",
    () =>
      Effect.gen(function* () {
        const closed = yield* withHost(
          Effect.gen(function* () {
            const workers = yield* McpWorkers
            const id = yield* workers.open(stateful())
            const pid = (yield* workers.status(id)).pid
            const status = yield* workers.close(id)
            const again = yield* workers.callTool(id, "echo", { token: "x" }).pipe(
              Effect.as("sent"),
              Effect.catchTag("UnknownWorker", (error) => Effect.succeed(`${error._tag} ${error.delivery}`))
            )
            return {
              state: status.state,
              active: status.cleanup?.activeProcesses,
              again,
              hadPid: typeof pid === "number"
            }
          })
        )
        assert.deepStrictEqual(closed, { state: "closed", active: 0, again: "UnknownWorker not_sent", hadPid: true })
        const noHost = yield* Effect.gen(function* () {
          const workers = yield* McpWorkers
          return yield* workers.status("mcpw_nobody").pipe(
            Effect.as("answered"),
            Effect.catchTag("HostUnavailable", (error) => Effect.succeed(`${error._tag} ${error.delivery}`))
          )
        }).pipe(Effect.provide(NodeMcpWorkers.layerRemote))
        assert.strictEqual(noHost, "HostUnavailable not_sent")
      })
  )

  it.live("Redacted secrets reach the server's environment; Config-driven options; bad input is InvalidInput", () =>
    Effect.gen(function* () {
      const provider = ConfigProvider.fromUnknown({ MCP_REQUEST_TIMEOUT: "250 millis" })
      const layer = NodeMcpWorkers.layerConfig({
        requestTimeout: Config.Duration("MCP_REQUEST_TIMEOUT").pipe(Config.withDefault("30 seconds"))
      }).pipe(Layer.provide(ConfigProvider.layer(provider)))
      const seen = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open({ ...stateful(), env: { API_TOKEN: Redacted.make("s3cret") } })
        const value = structured(yield* workers.callTool(id, "env", { name: "API_TOKEN" }))?.value
        // The registry's default budget, read from Config, applies to a call that names none.
        const timedOut = yield* workers.callTool(id, "sleep", { ms: 5_000 }).pipe(
          Effect.as("answered"),
          Effect.catchTag("DeliveryUnknown", (error) => Effect.succeed(error.reason))
        )
        const invalid = yield* workers.callTool(id, "echo", { token: () => 1 } as never).pipe(
          Effect.as("sent"),
          Effect.catchTag("InvalidInput", (error) => Effect.succeed(`${error.where} ${error.path}`))
        )
        const status = JSON.stringify(yield* workers.status(id))
        return { value, timedOut, invalid, leaks: status.includes("s3cret") }
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(seen, {
        value: "s3cret",
        timedOut: "timeout",
        invalid: "arguments args.token",
        leaks: false
      })
    })
  )

  it.live("handlers are Effect 4 effects with the layer's services; log lines go to the application's logger", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
        lines.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      const answered = yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(stateful())
        const roots = yield* workers.callTool(id, "ask", { kind: "roots" })
        yield* workers.close(id)
        return structured(roots)?.answer
      }).pipe(
        Effect.provide(
          NodeMcpWorkers.layer({
            logLevel: "Info",
            handlers: {
              roots: () =>
                Effect.map(Effect.service(References.MinimumLogLevel), (level) => ({
                  roots: [{ uri: "file:///work/project", name: `project at ${level}` }]
                }))
            }
          }).pipe(Layer.provide(Logger.layer([logger])))
        )
      )
      assert.deepStrictEqual(answered, { roots: [{ uri: "file:///work/project", name: "project at Info" }] })
      assert.isTrue(
        lines.some((line) => line.startsWith("Info ") && /opened/.test(line)),
        lines.join("\n")
      )
    })
  )
})
