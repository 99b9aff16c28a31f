import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } })

describe("AgentHost", () => {
  it.effect("listAllTools follows nextCursor page by page, with the caller's timeout on each", () =>
    Effect.gen(function* () {
      const asked: Array<unknown> = []
      const pages: Record<string, { tools: Array<ReturnType<typeof tool>>; nextCursor?: string }> = {
        "": { tools: [tool("a"), tool("b")], nextCursor: "p2" },
        p2: { tools: [tool("c")], nextCursor: "p3" },
        p3: { tools: [tool("d")] }
      }
      const tools = yield* AgentHost.listAllTools(
        (_id, options) => {
          asked.push(options)
          return Effect.succeed(pages[options?.cursor ?? ""])
        },
        "w1",
        { timeout: "2 seconds" }
      )
      assert.deepStrictEqual(
        tools.map((t) => t.name),
        ["a", "b", "c", "d"]
      )
      assert.deepStrictEqual(asked, [
        { timeout: "2 seconds", onProgress: undefined },
        { timeout: "2 seconds", onProgress: undefined, cursor: "p2" },
        { timeout: "2 seconds", onProgress: undefined, cursor: "p3" }
      ])
    })
  )

  it.effect("a cursor the server gave before ends the list instead of looping", () =>
    Effect.gen(function* () {
      let calls = 0
      const tools = yield* AgentHost.listAllTools(() => {
        calls++
        return Effect.succeed({ tools: [tool(`t${calls}`)], nextCursor: "again" })
      }, "w1")
      assert.strictEqual(calls, 2)
      assert.strictEqual(tools.length, 2)
    })
  )

  it.effect("extend adds the operations over the base's own; openAll reads the surface's environment by default", () =>
    Effect.gen(function* () {
      const opened: Array<ServerConfigInput> = []
      const base = {
        open: (config: ServerConfigInput) => {
          opened.push(config)
          return Effect.succeed("w1" as WorkerId)
        },
        close: () => Effect.succeed({ id: "w1" } as unknown as WorkerStatus),
        listTools: () => Effect.succeed({ tools: [tool("get-sum")] }),
        callTool: (_id: string, name: string) => Effect.succeed({ content: [{ type: "text" as const, text: name }] })
      } as unknown as AgentHost.Base
      const surface = AgentHost.extend(base, { environment: () => ({ TOKEN: "from-the-surface" }) })
      const document = Either.getOrThrow(
        McpConfig.fromCursor({ mcpServers: { a: { command: "x", env: { TOKEN: "${env:TOKEN}" } } } })
      )
      yield* surface.openAll(document)
      yield* surface.openAll(document, { environment: { TOKEN: "given" } })
      assert.deepStrictEqual(
        opened.map((config) => (config as { env?: Record<string, string> }).env?.TOKEN),
        ["from-the-surface", "given"]
      )
      const text = yield* surface.describe("w1", { name: "Api" })
      assert.include(text, "export interface Api {")
      assert.include(text, 'readonly get_sum: "get-sum"')
      const tools = yield* surface.tools("w1")
      const result = yield* tools.get_sum({})
      assert.deepStrictEqual(result.content, [{ type: "text", text: "get-sum" }])
    })
  )
})
