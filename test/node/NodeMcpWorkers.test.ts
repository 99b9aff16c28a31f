import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import { execFile } from "node:child_process"
import * as ProcessStart from "../../packages/node/src/internal/job/start.js"
import { statefulConfig } from "../fixtures/servers.js"
import {
  activePorts,
  eventually,
  isAlive,
  ownerThread,
  processesWithEnv,
  startedThreads,
  structured,
  tag,
  withHost
} from "./helpers.js"

describe("NodeMcpWorkers (stdio)", () => {
  it.live("C1: keeps state across separate runPromise calls of one runtime, in one server process", () =>
    Effect.promise(async () => {
      const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
      try {
        const id = await runtime.runPromise(Effect.flatMap(McpWorkers, (w) => w.open(statefulConfig())))
        assert.match(id, /^mcpw_[A-Za-z0-9_-]{22}$/)
        const counts: Array<number> = []
        for (let i = 0; i < 3; i++) {
          const result = await runtime.runPromise(Effect.flatMap(McpWorkers, (w) => w.callTool(id, "inc")))
          counts.push(structured(result).count)
        }
        assert.deepStrictEqual(counts, [1, 2, 3])
        const status = await runtime.runPromise(Effect.flatMap(McpWorkers, (w) => w.status(id)))
        const info = await runtime.runPromise(Effect.flatMap(McpWorkers, (w) => w.callTool(id, "info")))
        assert.strictEqual(status.state, "ready")
        assert.strictEqual(status.pid, structured(info).pid)
        assert.isNumber(status.threadId)
        assert.notStrictEqual(status.threadId, 0)
        assert.strictEqual(status.server?.name, "stateful-fixture")
        assert.isString(status.protocolVersion)
      } finally {
        await runtime.dispose()
      }
    })
  )

  it.live("C14: isError is a normal result; the connection stays ready in the same process", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const before = (yield* workers.status(id)).pid
        const result = yield* workers.callTool(id, "fail")
        assert.isTrue(result.isError)
        const status = yield* workers.status(id)
        assert.strictEqual(status.state, "ready")
        assert.strictEqual(status.pid, before)
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "after" })).token, "after")
      })
    )
  )

  it.live("a JSON-RPC error is a ServerError and the connection stays ready", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const error = yield* Effect.flip(workers.callTool(id, "rpc_error", { code: -32602 }))
        assert.strictEqual(error._tag, "ServerError")
        if (error._tag === "ServerError") {
          assert.strictEqual(error.code, -32602)
          assert.deepStrictEqual(error.data, { detail: "x" })
        }
        assert.strictEqual((yield* workers.status(id)).state, "ready")
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "ok" })).token, "ok")
      })
    )
  )

  it.live("C15: the server exiting mid-call fails the worker for good; close still cleans up", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
        const pid = (yield* workers.status(id)).pid!
        const error = yield* Effect.flip(workers.callTool(id, "exit", { code: 3 }))
        assert.strictEqual(error._tag, "WorkerFailed")
        if (error._tag === "WorkerFailed") assert.strictEqual(error.delivery, "unknown")
        const status = yield* workers.status(id)
        assert.strictEqual(status.state, "failed")
        assert.isNotNull(status.lastFailure)
        const later = yield* Effect.flip(workers.callTool(id, "echo", { token: "x" }))
        assert.strictEqual(later._tag, "WorkerFailed")
        if (later._tag === "WorkerFailed") assert.strictEqual(later.delivery, "not_sent")
        // Nothing respawned the server.
        yield* Effect.sleep(200)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.isFalse(isAlive(pid))
        const closed = yield* workers.close(id)
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
        assert.strictEqual((yield* Effect.flip(workers.status(id)))._tag, "UnknownWorker")
      })
    )
  )

  it.scopedLive("C20: an owner thread that dies is not respawned, and the host ends its server tree", () =>
    Effect.gen(function* () {
      const threads = yield* startedThreads
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const id = yield* workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })
        yield* workers.callTool(id, "spawn", {})
        assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 2)
        const portsBefore = activePorts()
        const inflight = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 5000 }))
        yield* Effect.sleep(50)
        assert.strictEqual(threads.length, 1)
        const thread = yield* ownerThread(threads, (yield* workers.status(id)).threadId)
        yield* Effect.promise(() => thread.terminate())
        const error = yield* Effect.flip(Fiber.join(inflight))
        assert.strictEqual(error._tag, "WorkerFailed")
        if (error._tag === "WorkerFailed") assert.strictEqual(error.kind, "thread")
        assert.strictEqual((yield* workers.status(id)).state, "failed")
        assert.isTrue(yield* Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", t).length === 0)))
        // The platform Worker would respawn after 1 s: wait past that and look for a new thread.
        yield* Effect.sleep(1300)
        assert.strictEqual(threads.length, 1)
        assert.isAtMost(activePorts(), portsBefore)
        const closed = yield* workers.close(id)
        assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
    })
  )

  it.live("C4: a missing binary fails at stage spawn and leaves no thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const ports = activePorts()
        const error = yield* Effect.flip(workers.open({ command: "/nonexistent/mcp-server-binary", args: ["--token"] }))
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag === "OpenFailed") assert.strictEqual(error.stage, "spawn")
        // The failure names the command and the working directory, never the arguments.
        assert.strictEqual(
          error.message,
          `spawn failed (ENOENT): the command was not found (command "/nonexistent/mcp-server-binary", ` +
            `working directory ${JSON.stringify(process.cwd())})`
        )
        const noDirectory = yield* Effect.flip(workers.open({ ...statefulConfig(), cwd: "/nonexistent/mcp-dir" }))
        assert.strictEqual(
          noDirectory.message,
          `spawn failed (ENOENT): the working directory was not found (command ${JSON.stringify(process.execPath)}, ` +
            `working directory "/nonexistent/mcp-dir")`
        )
        assert.isTrue(yield* Effect.promise(() => eventually(() => activePorts() <= ports)))
      })
    )
  )

  it.live("C4, C24: a crash during initialize reports exit code and a redacted stderr tail", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const secret = `secret-${t}`
        const error = yield* Effect.flip(
          workers.open({
            ...statefulConfig("--crash-on-initialize", "--stderr", "booting the fixture", "--stderr-env", "API_KEY"),
            env: { API_KEY: secret, TEST_TAG: t }
          })
        )
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag === "OpenFailed") {
          assert.strictEqual(error.stage, "initialize")
          assert.strictEqual(error.exitCode, 7)
          assert.include(error.stderrTail ?? "", "booting the fixture")
          assert.include(error.stderrTail ?? "", "API_KEY=***")
          assert.notInclude(JSON.stringify(error), secret)
          assert.notInclude(error.message, secret)
        }
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
      })
    )
  )

  it.live("C4: a server that never answers initialize times out and is ended", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const ports = activePorts()
        const started = Date.now()
        const error = yield* Effect.flip(
          workers.open({ ...statefulConfig("--hang-on-initialize"), env: { TEST_TAG: t } }, { timeout: "800 millis" })
        )
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag === "OpenFailed") assert.strictEqual(error.stage, "timeout")
        // The 800 ms budget ended it, not the 30 s default; the rest is ending the thread and the server, which a
        // busy machine slows down.
        assert.isBelow(Date.now() - started, 6000)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.isTrue(yield* Effect.promise(() => eventually(() => activePorts() <= ports)))
      })
    )
  )

  it.live("C4: interrupting an open leaves no thread and no process", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const t = tag()
        const ports = activePorts()
        const fiber = yield* Effect.fork(
          workers.open({ ...statefulConfig("--hang-on-initialize"), env: { TEST_TAG: t } })
        )
        assert.isTrue(yield* Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", t).length === 1)))
        yield* Fiber.interrupt(fiber)
        assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
        assert.isTrue(yield* Effect.promise(() => eventually(() => activePorts() <= ports)))
      })
    )
  )

  it.live("C9: an infinite timeout waits (it is clamped, not fired at once); a bad one is InvalidInput", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig(), { timeout: Duration.infinity })
        const result = yield* workers.callTool(id, "sleep", { ms: 50, token: "waited" }, { timeout: Duration.infinity })
        assert.strictEqual(structured(result).token, "waited")
        const bad = yield* Effect.flip(workers.callTool(id, "echo", { token: "x" }, { timeout: "soon" as never }))
        assert.strictEqual(bad._tag, "InvalidInput")
        if (bad._tag === "InvalidInput") assert.strictEqual(bad.path, "options.timeout")
        for (const timeout of [-5, Number.NaN, "-5 millis" as Duration.DurationInput]) {
          const refused = yield* Effect.flip(workers.callTool(id, "echo", { token: "x" }, { timeout }))
          assert.strictEqual(refused._tag, "InvalidInput")
        }
        const calls = (yield* workers.callTool(id, "calls")).structuredContent as { calls: Array<{ name: string }> }
        assert.isFalse(
          calls.calls.some((call) => call.name === "echo"),
          "a refused timeout sends nothing"
        )
        const badOpen = yield* Effect.flip(workers.open(statefulConfig(), { timeout: "soon" as never }))
        assert.strictEqual(badOpen._tag, "InvalidInput")
        assert.isFalse((yield* workers.status(id)).busy)
      })
    )
  )

  it.live("results are the server's raw objects: unknown fields kept, 1 MiB exact, stray stdout lines ignored", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig("--garbage-stdout"))
        const result = yield* workers.callTool(id, "structured")
        assert.deepStrictEqual(result.structuredContent, { a: 1, nested: { b: [1, null, ""] } })
        assert.deepStrictEqual(result._meta, { "x-fixture": true })
        assert.strictEqual((result as Record<string, unknown>).extraField, "kept")
        for (const bytes of [0, 1, 65_535, 65_536, 1_048_576]) {
          const big = yield* workers.callTool(id, "big", { bytes })
          const content = big.content as Array<{ type: string; text: string }>
          assert.strictEqual(content[0]!.text.length, bytes)
        }
        const tools = yield* workers.listTools(id)
        assert.isTrue(tools.tools.some((tool) => tool.name === "echo"))
        assert.strictEqual((yield* workers.status(id)).state, "ready")
      })
    )
  )

  it.live(
    "C25: tool descriptions are not interpreted: a result that breaks its declared output schema is returned",
    () =>
      withHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const tools = yield* workers.listTools(id)
          assert.isDefined(tools.tools.find((tool) => tool.name === "typed")?.outputSchema)
          assert.deepStrictEqual((yield* workers.callTool(id, "typed")).structuredContent, { count: 0 })
          // Unchanged, before and after the tools were listed: whether a result is returned never depends on a
          // description the client happened to cache.
          const breach = yield* workers.callTool(id, "typed", { bad: true })
          assert.deepStrictEqual(breach.structuredContent, { count: "not a number" })
          assert.strictEqual((yield* workers.status(id)).state, "ready")
        })
      )
  )

  it.live("C8: of many calls started at once, exactly one is sent and the rest are refused unsent", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const results = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) =>
            Effect.either(workers.callTool(id, "sleep", { ms: 100, token: `r${i}` }))
          ),
          { concurrency: "unbounded" }
        )
        const sent = results.filter((result) => result._tag === "Right")
        const refused = results.filter((result) => result._tag === "Left" && result.left._tag === "WorkerBusy")
        assert.strictEqual(sent.length, 1)
        assert.strictEqual(refused.length, 39)
        const calls = (yield* workers.callTool(id, "calls")).structuredContent as { calls: Array<{ name: string }> }
        assert.strictEqual(calls.calls.filter((call) => call.name === "sleep").length, 1)
      })
    )
  )

  it.live("a host whose own entry is read with --input-type=module still opens workers", () =>
    Effect.promise(async () => {
      const script = `
        import * as Effect from "effect/Effect"
        const { McpWorkers } = await import(${JSON.stringify(new URL("../../packages/core/src/McpWorkers.ts", import.meta.url).pathname)})
        const { NodeMcpWorkers } = await import(${JSON.stringify(new URL("../../packages/node/src/index.ts", import.meta.url).pathname)})
        const config = ${JSON.stringify(statefulConfig())}
        const count = await Effect.runPromise(Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(config)
          const result = yield* workers.callTool(id, "inc")
          yield* workers.close(id)
          return result.structuredContent.count
        }).pipe(Effect.provide(NodeMcpWorkers.layer())))
        console.log("COUNT " + count)
      `
      const output = await new Promise<string>((resolve, reject) => {
        const child = execFile(
          process.execPath,
          ["--import", "tsx", "--input-type=module"],
          { cwd: new URL("../..", import.meta.url).pathname, timeout: 30_000 },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))
        )
        child.stdin!.end(script)
      })
      assert.include(output, "COUNT 1")
    })
  )

  it.live("the service handed out has the operations of McpWorkers and nothing of the host's own parts", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const service = yield* NodeMcpWorkers.make()
        const expected = [
          "open",
          ...Object.keys(Operations.requests),
          "status",
          "cancel",
          "close",
          "events",
          "openAll",
          "closeAll",
          "describe",
          "tools"
        ].sort()
        assert.deepStrictEqual(Object.keys(service).sort(), expected)
      })
    )
  )

  it.live("C5: closed, never-existing and malformed ids are all UnknownWorker", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const closed = yield* workers.close(id)
        assert.strictEqual(closed.state, "closed")
        for (const bad of [id, "mcpw_AAAAAAAAAAAAAAAAAAAAAA", "not an id", ""]) {
          assert.strictEqual((yield* Effect.flip(workers.status(bad)))._tag, "UnknownWorker")
          assert.strictEqual((yield* Effect.flip(workers.callTool(bad, "echo", { token: "x" })))._tag, "UnknownWorker")
          assert.strictEqual((yield* Effect.flip(workers.listTools(bad)))._tag, "UnknownWorker")
          assert.strictEqual((yield* Effect.flip(workers.close(bad)))._tag, "UnknownWorker")
          assert.strictEqual((yield* Effect.flip(workers.cancel(bad, "req_x")))._tag, "UnknownWorker")
        }
      })
    )
  )

  it.live("C24: status holds no command, args, env, arguments or results", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const canary = `canary-${tag()}`
        const config = statefulConfig(`--stderr=${canary}-arg`)
        const id = yield* workers.open({ ...config, env: { TOKEN: `${canary}-env` } })
        const slow = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 200, token: `${canary}-argument` }))
        yield* Effect.sleep(50)
        const busy = JSON.stringify(yield* workers.status(id))
        yield* Fiber.join(slow)
        yield* workers.callTool(id, "echo", { token: `${canary}-result` })
        const idle = JSON.stringify(yield* workers.status(id))
        for (const text of [busy, idle]) {
          assert.notInclude(text, canary)
          assert.notInclude(text, config.args[0]!)
          assert.notInclude(text, process.execPath)
        }
      })
    )
  )

  it.live("C16: bad arguments are InvalidInput with a path, and nothing is sent", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const error = yield* Effect.flip(
          workers.callTool(id, "echo", { token: "x", items: [1, 2, () => 3] } as unknown as Record<string, never>)
        )
        assert.strictEqual(error._tag, "InvalidInput")
        if (error._tag === "InvalidInput") {
          assert.strictEqual(error.path, "args.items[2]")
          assert.strictEqual(error.where, "arguments")
          assert.strictEqual(error.delivery, "not_sent")
        }
        const calls = structured(yield* workers.callTool(id, "calls")).calls as Array<unknown>
        assert.strictEqual(calls.length, 1)
        assert.isFalse((yield* workers.status(id)).busy)
      })
    )
  )

  it.live("C18: the server gets a minimal environment plus env plus envFrom; the parent is untouched", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const name = `MCPW_TEST_FROM_${tag().toUpperCase()}`
        process.env[name] = "from-parent"
        process.env.MCPW_TEST_NOT_PASSED = "nope"
        const envBefore = { ...process.env }
        try {
          const id = yield* workers.open({ ...statefulConfig(), env: { EXPLICIT: "yes" }, envFrom: [name] })
          const info = structured(yield* workers.callTool(id, "info"))
          const keys = info.envKeys as Array<string>
          assert.include(keys, "EXPLICIT")
          assert.include(keys, name)
          assert.include(keys, "PATH")
          assert.notInclude(keys, "MCPW_TEST_NOT_PASSED")
          assert.strictEqual(structured(yield* workers.callTool(id, "env", { name })).value, "from-parent")
          assert.deepStrictEqual({ ...process.env }, envBefore)
          const missing = yield* Effect.flip(workers.open({ ...statefulConfig(), envFrom: ["MCPW_SURELY_MISSING"] }))
          assert.strictEqual(missing._tag, "InvalidInput")
          if (missing._tag === "InvalidInput") assert.include(missing.message, "MCPW_SURELY_MISSING")
        } finally {
          delete process.env[name]
          delete process.env.MCPW_TEST_NOT_PASSED
        }
      })
    )
  )

  it.live("C18, C24: the proxy and CA variables reach the server by default; a proxy's password never shows", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const password = `pw-${tag()}`
        const proxy = `http://user:${password}@proxy.invalid:3128`
        const values = Object.fromEntries(
          ProcessStart.networkVariables.map((name) => [
            name,
            name.toLowerCase().includes("proxy") ? proxy : `v-${name}`
          ])
        )
        const saved = Object.fromEntries(ProcessStart.networkVariables.map((name) => [name, process.env[name]]))
        // The fixture does not start Node's fetch, so a proxy that does not exist stays unused.
        Object.assign(process.env, values, { NO_PROXY: "localhost", no_proxy: "localhost" })
        try {
          const id = yield* workers.open(statefulConfig())
          for (const name of ProcessStart.networkVariables) {
            const value = structured(yield* workers.callTool(id, "env", { name })).value
            assert.strictEqual(value, process.env[name], name)
          }
          assert.notInclude(JSON.stringify(yield* workers.status(id)), password)
          const crashed = yield* Effect.flip(
            workers.open(statefulConfig("--crash-on-initialize", "--stderr-env", "HTTPS_PROXY"))
          )
          assert.strictEqual(crashed._tag, "OpenFailed")
          if (crashed._tag === "OpenFailed") assert.include(crashed.stderrTail ?? "", "env HTTPS_PROXY=***")
          assert.notInclude(JSON.stringify(crashed), password)
        } finally {
          for (const [name, value] of Object.entries(saved)) {
            if (value === undefined) delete process.env[name]
            else process.env[name] = value
          }
        }
      })
    )
  )

  it.live("C17: arguments cross as JSON text: empty and falsy values arrive exactly, __proto__ stays data", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const args = {
          nothing: null,
          empty: "",
          zero: 0,
          no: false,
          list: [],
          object: {},
          sparse: [null, null, 3],
          nested: { deep: [[[{ x: [0, "", false, null] }]]] }
        }
        const result = yield* workers.callTool(id, "echo_args", args)
        assert.deepStrictEqual(structured(result).arguments, args)
        assert.strictEqual((structured(result).arguments.sparse as Array<unknown>).length, 3)
        const hostile = JSON.parse(
          '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}'
        )
        yield* workers.callTool(id, "echo_args", hostile)
        assert.isUndefined(({} as Record<string, unknown>).polluted)
        assert.strictEqual((yield* workers.status(id)).state, "ready")
      })
    )
  )

  it.live("C25: results are data: a result shaped like a protocol message or an error is returned as is", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        const lookalike = {
          _tag: "Failure",
          requestId: "req_AAAAAAAAAAAAAAAA",
          error: { _tag: "WorkerFailed", kind: "thread", message: "fake", delivery: "unknown" },
          template: "${process.exit(1)}"
        }
        const result = yield* workers.callTool(id, "echo_args", lookalike)
        assert.deepStrictEqual(structured(result).arguments, lookalike)
        const status = yield* workers.status(id)
        assert.strictEqual(status.state, "ready")
        assert.isNull(status.lastFailure)
      })
    )
  )

  it.live("C6: an idle worker stays ready (no idle timeout)", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open(statefulConfig())
        yield* workers.callTool(id, "inc")
        yield* Effect.sleep("2 seconds")
        assert.strictEqual((yield* workers.status(id)).state, "ready")
        assert.strictEqual(structured(yield* workers.callTool(id, "inc")).count, 2)
      })
    )
  )

  it.live("C7: closing the host layer closes every worker and leaves no process or thread", () =>
    Effect.gen(function* () {
      const t = tag()
      const ports = activePorts()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(NodeMcpWorkers.layer(), scope)
      const workers = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const ids = yield* Effect.all(
        [1, 2, 3].map(() => workers.open({ ...statefulConfig(), env: { TEST_TAG: t } })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(ids).size, 3)
      yield* workers.callTool(ids[0]!, "spawn", { setsid: true })
      assert.strictEqual(processesWithEnv("TEST_TAG", t).length, 4)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(processesWithEnv("TEST_TAG", t), [])
      assert.isTrue(yield* Effect.promise(() => eventually(() => activePorts() <= ports)))
    })
  )
})

describe("NodeMcpWorkers.layer(options), layerConfig", () => {
  const captureLogs = () => {
    const messages: Array<string> = []
    const logger = Logger.make(({ message }) => {
      messages.push(String(message))
    })
    return { messages, logger: Logger.replace(Logger.defaultLogger, logger) }
  }

  it.live("requestTimeout is the default budget of a config without timeoutMs; the config's own wins", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const started = Date.now()
      const error = yield* Effect.flip(workers.callTool(id, "sleep", { ms: 5_000 }))
      assert.strictEqual(error._tag, "DeliveryUnknown")
      assert.isBelow(Date.now() - started, 2_500)
      const own = yield* workers.open({ ...statefulConfig("--exit-on-stdin-eof"), timeoutMs: 10_000 })
      assert.strictEqual(structured(yield* workers.callTool(own, "sleep", { ms: 600, token: "t" })).token, "t")
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ requestTimeout: "300 millis" })))
  )

  it.live("maxResultBytes is the default limit of a config without one", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const error = yield* Effect.flip(workers.callTool(id, "big", { bytes: 200_000 }))
      assert.strictEqual(error._tag, "ResultTooLarge")
      const own = yield* workers.open({ ...statefulConfig("--exit-on-stdin-eof"), maxResultBytes: 1_000_000 })
      yield* workers.callTool(own, "big", { bytes: 200_000 })
    }).pipe(Effect.provide(NodeMcpWorkers.layer({ maxResultBytes: 100_000 })))
  )

  it.live("routine lines are Debug by default, at the level asked for with logLevel; options are checked", () =>
    Effect.gen(function* () {
      const quiet = captureLogs()
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        yield* workers.close(yield* workers.open(statefulConfig("--exit-on-stdin-eof")))
      }).pipe(Effect.provide(NodeMcpWorkers.layer()), Effect.provide(quiet.logger))
      assert.notInclude(quiet.messages, "worker opened")
      const loud = captureLogs()
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        yield* workers.close(yield* workers.open(statefulConfig("--exit-on-stdin-eof")))
      }).pipe(Effect.provide(NodeMcpWorkers.layer({ logLevel: LogLevel.Info })), Effect.provide(loud.logger))
      assert.includeMembers(loud.messages, ["worker opened", "worker closed"])
      const bad = yield* Effect.exit(
        Effect.provide(McpWorkers, NodeMcpWorkers.layer({ requestTimeout: "soon" as Duration.DurationInput }))
      )
      assert.isTrue(Exit.isFailure(bad) && Cause.pretty(bad.cause).includes("options.requestTimeout"))
    })
  )

  it.live("layerConfig reads the options from Config", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const started = Date.now()
      assert.strictEqual((yield* Effect.flip(workers.callTool(id, "sleep", { ms: 5_000 })))._tag, "DeliveryUnknown")
      assert.isBelow(Date.now() - started, 2_500)
    }).pipe(
      Effect.provide(
        NodeMcpWorkers.layerConfig({ requestTimeout: Config.duration("MCP_REQUEST_TIMEOUT") }).pipe(
          Layer.provide(
            Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["MCP_REQUEST_TIMEOUT", "300 millis"]])))
          )
        )
      )
    )
  )
})
