/**
 * A sandbox: nothing of the host's but the socket path and the grant it was handed, and one package without
 * dependencies, `@mcp-worker/caller`. The same file runs under Node, Deno and Bun. It calls the granted tool once and
 * prints what it got; a tool outside its grant, or a close, is refused before anything reaches the server.
 */
import { makeClient } from "@mcp-worker/caller"

const mcp = makeClient({ connect: process.env.MCP_SOCKET })
const grant = process.env.MCP_GRANT
try {
  const { structuredContent } = await mcp.callTool(grant, "increment", {}, { timeout: 5_000 })
  const other = await mcp.callTool(grant, "echo", {}).catch((error) => error._tag)
  console.log(JSON.stringify(structuredContent), `(a tool outside the grant: ${String(other)})`)
} catch (error) {
  console.log(`refused: ${error._tag}: ${error.message}`)
} finally {
  await mcp.dispose()
}
