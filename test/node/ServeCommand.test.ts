// `mcp-worker serve <config>` as a real process: spawned by an MCP SDK client over stdio as a desktop app spawns it,
// and with --http as a service ended by SIGTERM. Either way every worker closes and its server process is gone.
import { assert, describe, it } from "@effect/vitest"
import * as V2 from "@modelcontextprotocol/client"
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { fixturePath } from "../fixtures/servers.js"
import { eventually, isAlive, processesWithEnv } from "./helpers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const main = path.join(root, "packages/node/src/internal/serve/main.ts")
const command = [process.execPath, "--import", "tsx", main] as const

/**
 * A config document of one stateful fixture (and one entry that cannot start), tagged so leftovers are found. The
 * fixture logs each call it receives to `calls.log` beside the document.
 */
const configFile = (tag: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-serve-"))
      const file = path.join(dir, "workers.json")
      const args = [fixturePath("stateful"), "--log-file", path.join(dir, "calls.log")]
      const counter = { command: process.execPath, args, env: { TEST_TAG: tag } }
      fs.writeFileSync(file, JSON.stringify({ mcpServers: { counter, missing: { command: "/nonexistent/server" } } }))
      return file
    }),
    (file) =>
      Effect.sync(() => {
        for (const pid of processesWithEnv("TEST_TAG", tag)) process.kill(pid, "SIGKILL")
        fs.rmSync(path.dirname(file), { recursive: true, force: true })
      })
  )

const serverPid = (client: Client) =>
  Effect.promise(() => client.callTool({ name: "counter__info", arguments: {} })).pipe(
    Effect.map((result) => (result.structuredContent as { pid: number }).pid)
  )

/**
 * Starts a minute-long `counter__sleep` and waits until the server has received it: the call is in flight. Resolves
 * with how the call ended (it is not expected to end by itself within the test).
 */
const callInFlight = (client: { callTool: Client["callTool"] }, config: string) =>
  Effect.gen(function* () {
    const log = path.join(path.dirname(config), "calls.log")
    const outcome = client
      .callTool({ name: "counter__sleep", arguments: { ms: 60_000 } }, undefined, { timeout: 120_000 })
      .then(
        () => ({ ended: "result" as const, at: Date.now() }),
        (error: Error) => ({ ended: "error" as const, at: Date.now(), message: error.message })
      )
    const received = () => fs.existsSync(log) && fs.readFileSync(log, "utf8").includes('"name":"sleep"')
    assert.isTrue(yield* Effect.promise(() => eventually(received, 30_000)), "the server never received the call")
    return outcome
  })

/** C27, C146: after the command's SIGKILL the reaper ends every process of the tag's servers within 2 s. */
const serversGone = (tag: string, pids: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const killed = Date.now()
    const gone = () => processesWithEnv("TEST_TAG", tag).length === 0 && !pids.some(isAlive)
    assert.isTrue(yield* Effect.promise(() => eventually(gone, 2_000)), "a server process is left")
    assert.isAtMost(Date.now() - killed, 2_000)
  })

/** The command with `--http` and `flags`, up: its endpoint, grant file and exit. SIGKILLed if a test leaves it. */
const httpCommand = (config: string, ...flags: Array<string>) =>
  Effect.gen(function* () {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(command[0], [...command.slice(1), "serve", config, "--http", ...flags], { cwd: root })),
      (child) => Effect.sync(() => child.kill("SIGKILL"))
    )
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal }))
    )
    const line = yield* Effect.promise(
      () => new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve))
    )
    const { grantFile, url } = JSON.parse(line) as { url: string; grantFile: string }
    return { child, exited, url, grantFile, stderr: () => stderr }
  })

const run = (args: ReadonlyArray<string>) =>
  Effect.promise(
    () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(command[0], [...command.slice(1), ...args], { cwd: root })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        child.on("close", (code) => resolve({ code, stdout, stderr }))
      })
  )

describe("mcp-worker serve", () => {
  it.live("C138: --help says how to use it; a wrong command says what was wrong and exits 2", () =>
    Effect.gen(function* () {
      const help = yield* run(["--help"])
      assert.strictEqual(help.code, 0)
      assert.match(help.stdout, /^Usage: mcp-worker serve <config.json>/)
      const wrong = yield* run(["serve", "x.json", "--bogus"])
      assert.strictEqual(wrong.code, 2)
      assert.match(wrong.stderr, /unknown or incomplete option "--bogus"/)
    })
  )

  it.scopedLive(
    "C137, C138: a desktop-app client spawns it on stdio, calls a tool, and its close ends every server",
    () =>
      Effect.gen(function* () {
        const tag = `serve-stdio-${process.pid}-${Date.now()}`
        const file = yield* configFile(tag)
        const transport = new StdioClientTransport({
          command: command[0],
          args: [...command.slice(1), "serve", file],
          cwd: root,
          stderr: "pipe"
        })
        let stderr = ""
        transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
        const client = new Client({ name: "desktop", version: "1.0.0" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        const tools = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        assert.include(tools, "counter__inc")
        assert.isFalse(tools.some((name) => name.startsWith("missing__")))
        const pid = yield* serverPid(client)
        assert.isTrue(isAlive(pid))
        const closed = new Promise<void>((resolve) => transport.stderr?.once("end", () => resolve()))
        yield* Effect.promise(() => client.close())
        yield* Effect.promise(() => closed)
        assert.match(stderr, /missing: not opened/)
        assert.match(stderr, /counter: closed, its processes gone/)
        assert.isFalse(isAlive(pid))
      })
  )

  it.scopedLive("C138: with --http it prints the endpoint, writes a 0600 grant, and SIGTERM ends every server", () =>
    Effect.gen(function* () {
      const tag = `serve-http-${process.pid}-${Date.now()}`
      const file = yield* configFile(tag)
      const { child, exited, grantFile, url, stderr } = yield* httpCommand(file)
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      assert.strictEqual(fs.statSync(grantFile).mode & 0o777, 0o600)
      const grant = fs.readFileSync(grantFile, "utf8")
      const client = new Client({ name: "http", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      yield* Effect.promise(() =>
        client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      )
      const pid = yield* serverPid(client)
      child.kill("SIGTERM")
      assert.deepStrictEqual(yield* Effect.promise(() => exited), { code: 0, signal: null })
      yield* Effect.promise(() => client.close())
      assert.match(stderr(), /counter: closed, its processes gone/)
      assert.isFalse(isAlive(pid))
      assert.isFalse(fs.existsSync(grantFile))
    })
  )

  it.scopedLive("C146: SIGKILLed mid-call over --http: the stream breaks at once, no server process is left", () =>
    Effect.gen(function* () {
      const tag = `serve-kill-http-${process.pid}-${Date.now()}`
      const file = yield* configFile(tag)
      const { child, exited, grantFile, url } = yield* httpCommand(
        file,
        "--grant-file",
        path.join(path.dirname(file), "grant")
      )
      const grant = fs.readFileSync(grantFile, "utf8")
      const client = new Client({ name: "http", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      yield* Effect.acquireRelease(
        Effect.promise(() =>
          client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
        ),
        () => Effect.promise(() => client.close())
      )
      const pid = yield* serverPid(client)
      const grandchild = yield* Effect.promise(() => client.callTool({ name: "counter__spawn", arguments: {} }))
      const tree = [pid, (grandchild.structuredContent as { pid: number }).pid]
      // The SDK client reports a broken call stream on `onerror` and keeps the call pending (it would resume a stream
      // that had event ids; the gateway's have none, C146): the application closes, and the call fails.
      const broken = new Promise<number>((resolve) => {
        client.onerror = (error) => {
          if (!/SSE stream disconnected/.test(error.message)) return
          resolve(Date.now())
          void client.close()
        }
      })
      const outcome = yield* callInFlight(client, file)
      child.kill("SIGKILL")
      const killed = Date.now()
      assert.deepStrictEqual(yield* Effect.promise(() => exited), { code: null, signal: "SIGKILL" })
      yield* serversGone(tag, tree)
      assert.isAtMost((yield* Effect.promise(() => broken)) - killed, 2_000)
      const ended = yield* Effect.promise(() => outcome)
      assert.strictEqual(ended.ended, "error")
      assert.match(ended.ended === "error" ? ended.message : "", /Connection closed/)
      // No JavaScript ran: the grant file is left, still 0600, naming a grant that died with the process.
      assert.strictEqual(fs.statSync(grantFile).mode & 0o777, 0o600)
      assert.strictEqual(fs.readFileSync(grantFile, "utf8"), grant)
      // The next run writes its own grant there; the dead one opens nothing on it.
      const next = yield* httpCommand(file, "--grant-file", grantFile)
      assert.notStrictEqual(fs.readFileSync(grantFile, "utf8"), grant)
      const stale = yield* Effect.promise(() =>
        fetch(next.url, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: "{}" })
      )
      assert.strictEqual(stale.status, 401)
      // It closes its worker and exits (C138) before the config's directory goes.
      next.child.kill("SIGTERM")
      assert.deepStrictEqual(yield* Effect.promise(() => next.exited), { code: 0, signal: null })
    })
  )

  it.scopedLive(
    "C146: SIGKILLed mid-call on stdio: the desktop client's transport closes, no server process is left",
    () =>
      Effect.gen(function* () {
        const tag = `serve-kill-stdio-${process.pid}-${Date.now()}`
        const file = yield* configFile(tag)
        const transport = new StdioClientTransport({
          command: command[0],
          args: [...command.slice(1), "serve", file],
          cwd: root,
          stderr: "pipe"
        })
        const client = new Client({ name: "desktop", version: "1.0.0" })
        const closed = new Promise<number>((resolve) => (client.onclose = () => resolve(Date.now())))
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        const pid = yield* serverPid(client)
        const outcome = yield* callInFlight(client, file)
        process.kill(transport.pid!, "SIGKILL")
        const killed = Date.now()
        yield* serversGone(tag, [pid])
        assert.isAtMost((yield* Effect.promise(() => closed)) - killed, 2_000)
        const ended = yield* Effect.promise(() => outcome)
        assert.strictEqual(ended.ended, "error")
        assert.match(ended.ended === "error" ? ended.message : "", /Connection closed/)
      })
  )

  it.scopedLive(
    "C137: the 2.x client (@modelcontextprotocol/client) spawns it on stdio, calls, and its close ends it",
    () =>
      Effect.gen(function* () {
        const tag = `serve-v2-stdio-${process.pid}-${Date.now()}`
        const file = yield* configFile(tag)
        const transport = new V2StdioClientTransport({
          command: command[0],
          args: [...command.slice(1), "serve", file],
          cwd: root,
          stderr: "pipe"
        })
        let stderr = ""
        transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
        const client = new V2.Client({ name: "v2-desktop", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        assert.strictEqual(client.getProtocolEra(), "legacy")
        const tools = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        assert.include(tools, "counter__inc")
        const counted = yield* Effect.promise(() => client.callTool({ name: "counter__inc", arguments: {} }))
        assert.deepStrictEqual(counted.structuredContent, { count: 1 })
        const pid = (
          (yield* Effect.promise(() => client.callTool({ name: "counter__info", arguments: {} })))
            .structuredContent as {
            pid: number
          }
        ).pid
        const refused = yield* Effect.promise(() =>
          client.callTool({ name: "nobody__inc", arguments: {} }).then(
            () => assert.fail("the call succeeded"),
            (error: { code?: number; data?: Record<string, unknown> }) => error
          )
        )
        assert.deepStrictEqual([refused.code, refused.data?.delivery], [-32602, "not_sent"])
        const ended = new Promise<void>((resolve) => transport.stderr?.once("end", () => resolve()))
        yield* Effect.promise(() => client.close())
        yield* Effect.promise(() => ended)
        assert.match(stderr, /counter: closed, its processes gone/)
        assert.isFalse(isAlive(pid))
      })
  )

  it.live(
    "C137: examples/serve (npm run example:serve): a desktop-app client calls a worker through the built command",
    () =>
      Effect.gen(function* () {
        // As the npm script does: the command is the package's built `bin`.
        const build = yield* Effect.promise(
          () =>
            new Promise<number | null>((resolve) =>
              spawn(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-b", "packages/node"], {
                cwd: root,
                stdio: "inherit"
              }).on("close", resolve)
            )
        )
        assert.strictEqual(build, 0)
        const example = yield* Effect.promise(
          () =>
            new Promise<{ code: number | null; stdout: string }>((resolve) => {
              const child = spawn(process.execPath, ["--import", "tsx", "examples/serve/main.ts"], { cwd: root })
              let stdout = ""
              child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
              child.on("close", (code) => resolve({ code, stdout }))
            })
        )
        assert.strictEqual(example.code, 0)
        assert.match(example.stdout, /notebook__increment: \{"count":1\}\nnotebook__increment: \{"count":2\}/)
      }),
    120_000
  )
})
