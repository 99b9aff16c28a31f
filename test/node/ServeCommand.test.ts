// `mcp-worker serve <config>` as a real process: spawned by an MCP SDK client over stdio as a desktop app spawns it,
// and with --http as a service ended by SIGTERM. Either way every worker closes and its server process is gone.
import { assert, describe, it } from "@effect/vitest"
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
import { processesWithEnv } from "./helpers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const main = path.join(root, "packages/node/src/internal/serve/main.ts")
const command = [process.execPath, "--import", "tsx", main] as const

/** A config document of one stateful fixture (and one entry that cannot start), tagged so leftovers are found. */
const configFile = (tag: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-serve-"))
      const file = path.join(dir, "workers.json")
      const counter = { command: process.execPath, args: [fixturePath("stateful")], env: { TEST_TAG: tag } }
      fs.writeFileSync(file, JSON.stringify({ mcpServers: { counter, missing: { command: "/nonexistent/server" } } }))
      return file
    }),
    (file) =>
      Effect.sync(() => {
        for (const pid of processesWithEnv("TEST_TAG", tag)) process.kill(pid, "SIGKILL")
        fs.rmSync(path.dirname(file), { recursive: true, force: true })
      })
  )

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const serverPid = (client: Client) =>
  Effect.promise(() => client.callTool({ name: "counter__info", arguments: {} })).pipe(
    Effect.map((result) => (result.structuredContent as { pid: number }).pid)
  )

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
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => spawn(command[0], [...command.slice(1), "serve", file, "--http"], { cwd: root })),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      const line = yield* Effect.promise(
        () => new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve))
      )
      const { grantFile, url } = JSON.parse(line) as { url: string; grantFile: string }
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
      assert.strictEqual(yield* Effect.promise(() => exited), 0)
      yield* Effect.promise(() => client.close())
      assert.match(stderr, /counter: closed, its processes gone/)
      assert.isFalse(isAlive(pid))
      assert.isFalse(fs.existsSync(grantFile))
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
