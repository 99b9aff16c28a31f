// The agent-host operations against servers nobody here wrote: the published server-everything, server-filesystem
// and server-memory, opened as one config document with a broken entry among them, their tools' declarations
// compiled with strict: true, and their tools called as methods from the host, a remote thread and the Promise
// client.
import { assert, describe, it } from "@effect/vitest"
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { compile } from "../core/declarationsCompiler.js"
import { withPromiseClient } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const require = createRequire(import.meta.url)
const server = (name: string) => require.resolve(`@modelcontextprotocol/server-${name}/dist/index.js`)

const layer = NodeMcpWorkers.layer()
const entry = remoteEntry()

// A Cursor-style file: the memory server's file comes from the caller's environment, through a reference.
const documentFor = (directory: string) =>
  Either.getOrThrow(
    McpConfig.fromCursor(
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [server("everything"), "stdio"] },
          filesystem: { command: process.execPath, args: [server("filesystem"), directory] },
          memory: {
            command: process.execPath,
            args: [server("memory")],
            env: { MEMORY_FILE_PATH: "${env:AGENT_HOST_TEST_MEMORY}" }
          },
          broken: { command: path.join(directory, "no-such-command") }
        }
      })
    )
  )

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-agent-"))

const compiles = (text: string) => assert.deepStrictEqual(compile(text), [], text)

describe("agent-host operations against the published servers", () => {
  it.live(
    "a document of four entries, one broken: three ids, one OpenFailed; declarations compile; closeAll confirms",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const directory = scratch()
        const opened = yield* workers.openAll(documentFor(directory), {
          environment: { AGENT_HOST_TEST_MEMORY: path.join(directory, "memory.jsonl") },
          open: { timeout: "20 seconds" }
        })
        assert.deepStrictEqual(Object.keys(OpenAll.ids(opened)), ["everything", "filesystem", "memory"])
        const broken = opened.broken
        assert.strictEqual(broken._tag, "Failed")
        assert.strictEqual(broken._tag === "Failed" ? broken.error._tag : "", "OpenFailed")

        const ids = OpenAll.ids(opened)
        for (const name of ["everything", "filesystem", "memory"]) {
          const text = yield* workers.describe(ids[name], { title: name })
          compiles(text)
        }
        const everything = yield* workers.describe(ids.everything)
        assert.include(everything, "get_sum(args: GetSumArgs, options?: ToolCallOptions): Promise<CallToolResult>")
        assert.include(everything, 'readonly get_sum: "get-sum"')
        assert.include(
          everything,
          "export type GetStructuredContentResult = StructuredResult<GetStructuredContentOutput>"
        )
        const filesystem = yield* workers.describe(ids.filesystem)
        assert.include(filesystem, "read_text_file(args: ReadTextFileArgs")
        // All three in one file, each in its namespace.
        const together = yield* Effect.forEach(Object.entries(ids), ([name, id]) =>
          workers.describe(id, { namespace: name })
        )
        compiles(together.join("\n"))

        // The binding: the tools as methods over callTool, the server's raw result.
        const tools = yield* workers.tools(ids.everything)
        const sum = yield* tools.get_sum({ a: 2, b: 3 })
        assert.include(JSON.stringify(sum.content), "5")
        const memory = yield* workers.tools(ids.memory)
        yield* memory.create_entities({
          entities: [{ name: "mcp-worker", entityType: "library", observations: ["holds connections"] }]
        })
        const graph = yield* memory.read_graph({})
        assert.include(JSON.stringify(graph.structuredContent), "holds connections")

        const closed = yield* workers.closeAll(opened)
        assert.deepStrictEqual(Object.keys(closed), ["everything", "filesystem", "memory"])
        for (const result of Object.values(closed)) {
          assert.strictEqual(result._tag, "Closed")
          assert.strictEqual(result._tag === "Closed" ? result.status.cleanup?.activeProcesses : -1, 0)
        }
        // Closed is closed: the binding now fails as callTool does.
        const after = yield* Effect.flip(tools.get_sum({ a: 1, b: 1 }))
        assert.strictEqual(after._tag, "UnknownWorker")
        fs.rmSync(directory, { recursive: true, force: true })
      }).pipe(Effect.provide(layer))
  )

  it.live("a missing reference fails its entry alone, with its path in the file", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const directory = scratch()
      const opened = yield* workers.openAll(documentFor(directory), {
        environment: {},
        open: { timeout: "20 seconds" }
      })
      const memory = opened.memory
      assert.strictEqual(memory._tag, "Failed")
      if (memory._tag === "Failed") {
        assert.strictEqual(memory.error._tag, "InvalidInput")
        assert.strictEqual((memory.error as { path?: string }).path, "mcpServers.memory.env.MEMORY_FILE_PATH")
      }
      assert.deepStrictEqual(Object.keys(OpenAll.ids(opened)), ["everything", "filesystem"])
      const closed = yield* workers.closeAll(opened)
      assert.isTrue(Object.values(closed).every((result) => result._tag === "Closed"))
      fs.rmSync(directory, { recursive: true, force: true })
    }).pipe(Effect.provide(layer))
  )

  it.live("the Promise client in the host's thread: openAll, tools, describe, closeAll", () =>
    Effect.gen(function* () {
      const directory = scratch()
      const outcome = yield* withPromiseClient(async (mcp) => {
        const opened = await mcp.openAll(documentFor(directory), {
          environment: { AGENT_HOST_TEST_MEMORY: path.join(directory, "memory.jsonl") },
          open: { timeout: 20_000 },
          entries: { filesystem: { isolation: "process" } }
        })
        const ids = OpenAll.ids(opened)
        const fsTools = await mcp.tools(ids.filesystem)
        fs.writeFileSync(path.join(directory, "note.txt"), "written by the test")
        const read = await fsTools.read_text_file({ path: path.join(directory, "note.txt") }, { timeout: 10_000 })
        const controller = new AbortController()
        controller.abort(new Error("aborted before the call"))
        const aborted = await fsTools.list_allowed_directories({}, { signal: controller.signal }).then(
          () => "resolved",
          (e: unknown) => (e as Error).message
        )
        const declarations = await mcp.describe(ids.memory, { name: "Memory" })
        const closed = await mcp.closeAll(opened)
        return { opened, read, aborted, declarations, closed }
      })
      assert.strictEqual(outcome.opened.broken._tag, "Failed")
      assert.include(JSON.stringify(outcome.read.content), "written by the test")
      assert.strictEqual(outcome.aborted, "aborted before the call")
      assert.include(outcome.declarations, "export interface Memory {")
      compiles(outcome.declarations)
      assert.deepStrictEqual(
        Object.values(outcome.closed).map((result) =>
          result._tag === "Closed" ? result.status.cleanup?.activeProcesses : -1
        ),
        [0, 0, 0]
      )
      fs.rmSync(directory, { recursive: true, force: true })
    }).pipe(Effect.provide(layer))
  )

  it.live("from a remote thread: the binding (Effect and Promise), describe, openAll and closeAll", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ command: process.execPath, args: [server("everything"), "stdio"] })
      const directory = scratch()
      const document = Either.getOrThrow(
        McpConfig.make({
          servers: {
            memory: {
              command: process.execPath,
              args: [server("memory")],
              env: { MEMORY_FILE_PATH: path.join(directory, "m.jsonl") }
            },
            broken: { command: path.join(directory, "no-such-command") }
          }
        })
      )
      const outcome = yield* runInThread(entry(), { scenario: "agentHost", data: { id, document } })
      assert.isTrue(outcome.ok, outcome.ok ? "" : String(outcome.error))
      const value = outcome.ok ? outcome.value : {}
      assert.include(value.effectSum, "42")
      assert.strictEqual(value.unknown, "UnknownWorker")
      assert.include(value.promise.methods, "get_sum")
      assert.include(value.promise.echo, "from a thread")
      // Arguments the server refuses: its own answer, as callTool gives it (no check of the binding's in between).
      const refused = value.promise.rejected
      assert.isTrue(refused.resolved === true || refused.rejected === "ServerError", JSON.stringify(refused))
      compiles(value.promise.declarations)
      assert.deepStrictEqual(value.promise.opened, { memory: "Opened", broken: "OpenFailed" })
      assert.deepStrictEqual(value.promise.closed, { memory: 0 })
      const closed = yield* workers.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      fs.rmSync(directory, { recursive: true, force: true })
    }).pipe(Effect.provide(layer))
  )
})
