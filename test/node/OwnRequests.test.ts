// C95: the requests the owner sends of its own accord — the tool listing it reads for tasks (C72), the era probe — are
// bounded by the owner's own bound, never by the caller's `maxResultBytes`; a listing that fails anyway fails the
// caller's call unsent, naming tools/list. Against the published server-everything (a task server whose tool listing is
// 7,697 bytes) over stdio and Streamable HTTP, and the tasks fixture with a listing past the bound or an error.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { everythingHttp, everythingStdio } from "../fixtures/everything.js"
import { fixturePath, modernConfig } from "../fixtures/servers.js"

const maxResultBytes = 4096

let dir = ""
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-own-"))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const echoed = (result: { content: ReadonlyArray<unknown> }) => (result.content[0] as { text?: string }).text

describe("C95: the owner's own requests are not bounded by the caller's maxResultBytes", () => {
  it.live("server-everything over stdio at 4096 bytes: a call answers, saveTo saves, a large result spills", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ ...everythingStdio, maxResultBytes })
      assert.strictEqual(echoed(yield* workers.callTool(id, "echo", { message: "x" })), "Echo: x")

      const target = path.join(dir, "saved.json")
      const saved = yield* workers.callTool(id, "echo", { message: "y" }, { saveTo: target })
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(target, "utf8")).content, [{ type: "text", text: "Echo: y" }])
      assert.strictEqual((saved as unknown as ResultFile.SavedResult).bytes, fs.statSync(target).size)

      const spillDir = path.join(dir, "spill")
      fs.mkdirSync(spillDir)
      const message = "z".repeat(10_000)
      const spilled = yield* workers.callTool(id, "echo", { message }, { onTooLarge: { spill: spillDir } })
      assert.isTrue(ResultFile.isSpilled(spilled))
      const file = (spilled as ResultFile.SpilledResult).path
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")).content, [
        { type: "text", text: `Echo: ${message}` }
      ])

      // The caller's own listing is the caller's result, held to its limit: the owner's was larger than 4096 bytes.
      const own = yield* Effect.flip(workers.listTools(id))
      assert.strictEqual(own._tag, "ResultTooLarge")
      if (own._tag === "ResultTooLarge") assert.isAbove(own.bytes, maxResultBytes)
      assert.strictEqual((yield* workers.status(id)).state, "ready")
      assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("McpClient, stdio at 4096 bytes: a call answers", () =>
    McpClient.withClient({ ...everythingStdio, maxResultBytes }, (client) =>
      Effect.map(client.callTool("echo", { message: "x" }), (result) => assert.strictEqual(echoed(result), "Echo: x"))
    )
  )

  it.scopedLive("server-everything over Streamable HTTP at 4096 bytes: a call answers", () =>
    Effect.gen(function* () {
      const url = yield* everythingHttp()
      const workers = yield* McpWorkers
      const id = yield* workers.open({ url, maxResultBytes })
      assert.strictEqual(echoed(yield* workers.callTool(id, "echo", { message: "x" })), "Echo: x")
      const own = yield* Effect.flip(workers.listTools(id))
      assert.strictEqual(own._tag, "ResultTooLarge")
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})

describe("C95: the era probe is the owner's own request", () => {
  it.live("a 2026-07-28 server whose server/discover answer passes maxResultBytes opens, and its calls answer", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const small = 300
      const id = yield* workers.open({ ...modernConfig(), maxResultBytes: small }, { timeout: "60 seconds" })
      const status = yield* workers.status(id)
      assert.deepStrictEqual([status.state, status.era], ["ready", "modern"])
      assert.strictEqual(echoed(yield* workers.callTool(id, "echo", { token: "x" })), "x")
      // The caller's own server/discover (a modern ping) is the caller's: held to the limit.
      const ping = yield* Effect.flip(workers.ping(id))
      assert.strictEqual(ping._tag, "ResultTooLarge")
      if (ping._tag === "ResultTooLarge") assert.isAbove(ping.bytes, small)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )
})

describe("C95: a tool listing that fails anyway fails the call unsent, naming tools/list", () => {
  /** The tasks fixture with `flags`, logging the tool calls it runs to a fresh file. */
  const tasksServer = (name: string, ...flags: Array<string>) => {
    const log = path.join(dir, `${name}.calls`)
    return { log, config: { command: process.execPath, args: [fixturePath("tasks"), "--calls-log", log, ...flags] } }
  }

  // The owner's bound for a config of 4096 bytes; the listing with a description this long passes it.
  const ownBound = ServerConfig.ownRequestBytesOf(
    Either.getOrThrow(ServerConfig.normalize({ ...everythingStdio, maxResultBytes }, {}))
  )

  const refusedUnsent = (config: { command: string; args: Array<string> }, log: string, detail: RegExp) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ ...config, maxResultBytes }, { timeout: "60 seconds" })
      const error = yield* Effect.flip(workers.callTool(id, "count", {}, { timeout: "60 seconds" }))
      assert.strictEqual(error._tag, "PreflightFailed", error.message)
      if (error._tag === "PreflightFailed") {
        assert.deepStrictEqual([error.method, error.delivery], ["tools/list", "not_sent"])
        assert.match(error.detail, detail)
        assert.match(error.message, /was not sent: the tools\/list the owner sends first/)
      }
      assert.isFalse(fs.existsSync(log), "the server ran no tool call")
      assert.strictEqual((yield* workers.status(id)).state, "ready")
      assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))

  it.live("a listing past the owner's bound", () => {
    const { config, log } = tasksServer("huge", "--huge-tool", String(ownBound))
    return refusedUnsent(
      config,
      log,
      new RegExp(`its answer passed the owner's bound .*\\(\\d+ > ${ownBound} bytes\\)`)
    )
  })

  it.live("a listing the server answers with an error", () => {
    const { config, log } = tasksServer("error", "--list-error")
    return refusedUnsent(config, log, /the server answered it with error -32603/)
  })
})
