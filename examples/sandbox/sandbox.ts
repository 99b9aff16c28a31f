/**
 * A sandbox: nothing of the host's but the socket path and the grant it was handed. It calls the granted tool once and
 * prints what it got; a tool outside its grant, or a close, is refused before anything reaches the server.
 */
import { makePromiseClient } from "@mcp-worker/node"

const mcp = makePromiseClient({ connect: process.env.MCP_SOCKET! })
const grant = process.env.MCP_GRANT!
try {
  const { structuredContent } = await mcp.callTool(grant, "increment", {}, { timeout: 5_000 })
  const other = await mcp.callTool(grant, "echo", {}).catch((error: { _tag: string }) => error._tag)
  console.log(JSON.stringify(structuredContent), `(a tool outside the grant: ${String(other)})`)
} catch (error) {
  console.log(`refused: ${(error as { _tag: string })._tag}: ${(error as Error).message}`)
} finally {
  await mcp.dispose()
}
