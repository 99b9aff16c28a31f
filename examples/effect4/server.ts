/**
 * The Effect 4 example's MCP server (stdio): a counter kept in memory, a slow tool that stops when cancelled, and a
 * tool that makes the server speak without being asked (a log message and a tool-list change).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const server = new McpServer({ name: "effect4-example", version: "1.0.0" }, { capabilities: { logging: {} } })
let count = 0

server.registerTool("increment", { description: "Adds one to a counter kept in memory", inputSchema: {} }, async () => {
  count += 1
  return { content: [{ type: "text", text: String(count) }], structuredContent: { count } }
})

server.registerTool(
  "slow",
  { description: "Waits ms milliseconds; stops early when cancelled", inputSchema: { ms: z.number() } },
  async ({ ms }, extra) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer)
        resolve()
      })
    })
    return { content: [{ type: "text", text: `waited ${ms} ms` }] }
  }
)

server.registerTool(
  "announce",
  { description: "Sends a log message and a tool-list change", inputSchema: {} },
  async () => {
    await server.server.sendLoggingMessage({ level: "info", logger: "example", data: `count is ${count}` })
    server.sendToolListChanged()
    return { content: [{ type: "text", text: "announced" }] }
  }
)

await server.connect(new StdioServerTransport())
