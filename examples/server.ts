/**
 * The bundled example MCP server: a small stateful server (a counter and a notebook kept in memory), built
 * with the MCP SDK and spoken to over stdio. Its state lives as long as its process: exactly what a caller
 * loses when it cannot keep the connection.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const server = new McpServer({ name: "example-notebook", version: "1.0.0" })
let count = 0
const notes: Array<string> = []

server.registerTool(
  "increment",
  { description: "Adds one to a counter kept in the server's memory", inputSchema: {} },
  async () => {
    count++
    return { content: [{ type: "text", text: `count is ${count}` }], structuredContent: { count } }
  }
)

server.registerTool(
  "add_note",
  { description: "Keeps a note in the server's memory", inputSchema: { text: z.string() } },
  async ({ text }) => {
    notes.push(text)
    return { content: [{ type: "text", text: `${notes.length} note(s)` }], structuredContent: { notes: notes.length } }
  }
)

server.registerTool("list_notes", { description: "Lists the notes kept so far", inputSchema: {} }, async () => ({
  content: [{ type: "text", text: JSON.stringify(notes) }],
  structuredContent: { notes }
}))

server.registerTool(
  "slow",
  { description: "Waits a while before answering", inputSchema: { ms: z.number() } },
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
  "report",
  { description: "Returns a large text report", inputSchema: { lines: z.number() } },
  async ({ lines }) => ({
    content: [
      {
        type: "text",
        text: Array.from({ length: lines }, (_, i) => `line ${i + 1}: count=${count} notes=${notes.length}`).join("\n")
      }
    ]
  })
)

await server.connect(new StdioServerTransport())
