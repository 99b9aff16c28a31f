import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import { tag } from "./helpers.js"

// Records every log line (message and annotations) and every span (name, attributes, events).
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, message }) => {
    lines.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
  })
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      const events: Array<unknown> = []
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: Math.random().toString(16).slice(2),
        traceId: Option.isSome(parent) ? parent.value.traceId : Math.random().toString(16).slice(2),
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => lines.push(JSON.stringify({ span: name, attributes: Object.fromEntries(attributes), events })),
        attribute: (key, value) => void attributes.set(key, value),
        event: (eventName, _time, eventAttributes) => void events.push([eventName, eventAttributes]),
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { lines, logger, tracer }
}

describe("secrets (C24)", () => {
  it.live("env values, arguments and results never reach status, logs, spans or error messages", () => {
    const { lines, logger, tracer } = capture()
    const canary = `CANARY${tag()}`
    return Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ ...statefulConfig(), env: { API_TOKEN: `${canary}-env` } })
      const texts: Array<string> = []
      texts.push(JSON.stringify(yield* workers.status(id)))
      const echoed = yield* workers.callTool(id, "echo", { token: `${canary}-argument` })
      assert.include(JSON.stringify(echoed), `${canary}-argument`)
      texts.push(JSON.stringify(yield* workers.status(id)))
      const envSeen = yield* workers.callTool(id, "env", { name: "API_TOKEN" })
      assert.include(JSON.stringify(envSeen), `${canary}-env`)
      const timedOut = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 2000, token: canary }, { timeout: 50 }))
      texts.push(timedOut.message, JSON.stringify(timedOut))
      const invalid = yield* Effect.flip(workers.callTool(id, "echo", { token: canary, bad: () => canary } as never))
      texts.push(invalid.message, JSON.stringify(invalid))
      const failedOpen = yield* Effect.flip(
        workers.open({
          ...statefulConfig("--crash-on-initialize", "--stderr-env", "API_TOKEN"),
          env: { API_TOKEN: `${canary}-stderr` }
        })
      )
      texts.push(failedOpen.message, JSON.stringify(failedOpen))
      const missing = yield* Effect.flip(workers.open({ command: `/nonexistent/${canary}`, env: { K: canary } }))
      texts.push(missing.message, JSON.stringify(missing))
      const closed = yield* workers.close(id)
      texts.push(JSON.stringify(closed))
      for (const text of texts) assert.notInclude(text, `${canary}-env`)
      for (const text of texts) assert.notInclude(text, `${canary}-stderr`)
      for (const text of texts.slice(0, 2)) assert.notInclude(text, canary)
      assert.isAbove(lines.length, 3)
      for (const line of lines) assert.notInclude(line, canary)
    }).pipe(
      Effect.provide(NodeMcpWorkers.layer()),
      Effect.withTracer(tracer),
      Logger.withMinimumLogLevel(LogLevel.All),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
  })

  it.live(
    "C34: client secrets and the tokens the owner obtains never reach status, logs, spans or error messages",
    () => {
      const { lines, logger, tracer } = capture()
      const canary = `CANARY${tag()}`
      return Effect.gen(function* () {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => startHttpFixture("oauth", `--secret=${canary}-secret`)),
          (fixture) => Effect.promise(() => fixture.stop())
        )
        const workers = yield* McpWorkers
        const auth = {
          type: "client_credentials" as const,
          clientId: "fixture-client",
          clientSecret: `${canary}-secret`
        }
        const id = yield* workers.open({ url: server.url, auth })
        const texts: Array<string> = []
        yield* workers.callTool(id, "inc")
        texts.push(JSON.stringify(yield* workers.status(id)))
        // A renewal after a refusal, then a renewal the authorization server refuses.
        yield* Effect.promise(() => server.admin("POST", "/admin/revoke"))
        yield* workers.callTool(id, "inc")
        yield* Effect.promise(() => server.admin("POST", "/admin/revoke"))
        yield* Effect.promise(() => server.admin("POST", "/admin/refuse"))
        const refused = yield* Effect.flip(workers.callTool(id, "inc"))
        texts.push(refused.message, JSON.stringify(refused), JSON.stringify(yield* workers.status(id)))
        const wrong = yield* Effect.flip(
          workers.open({ url: server.url, auth: { ...auth, clientSecret: `${canary}-x` } })
        )
        texts.push(wrong.message, JSON.stringify(wrong))
        texts.push(JSON.stringify(yield* workers.close(id)))
        for (const text of [...texts, ...lines]) {
          assert.notInclude(text, canary)
          assert.notInclude(text, "fixture-token-")
        }
        assert.isAbove(lines.length, 3)
      }).pipe(
        Effect.provide(NodeMcpWorkers.layer()),
        Effect.scoped,
        Effect.withTracer(tracer),
        Logger.withMinimumLogLevel(LogLevel.All),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
    }
  )
})
