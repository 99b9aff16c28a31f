/**
 * A desktop app's view of `mcp-worker serve`: it spawns the command over stdio, as a `mcpServers` entry
 * `{ "command": "npx", "args": ["@mcp-worker/node", "serve", "workers.json"] }` would, and speaks plain MCP to it.
 * Every server of workers.json is one live worker behind it; each tool is `<server>__<tool>`.
 *
 * Run from the repository's root: `npm run example:serve`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

// The command as the package installs it (`bin` of @mcp-worker/node); `npm run example:serve` builds it first.
const bin = "packages/node/dist/internal/serve/main.js"

const client = new Client({ name: "desktop-app", version: "1.0.0" })
await client.connect(
  new StdioClientTransport({ command: process.execPath, args: [bin, "serve", "examples/serve/workers.json"] })
)

const { tools } = await client.listTools()
console.log("tools:", tools.map((tool) => tool.name).join(", "))

// One live server behind the gateway: its counter goes on from one call to the next.
for (let i = 0; i < 2; i++) {
  const result = await client.callTool({ name: "notebook__increment", arguments: {} })
  console.log("notebook__increment:", JSON.stringify(result.structuredContent))
}

// Closing stdin ends the command, which closes every worker and confirms its processes are gone.
await client.close()
