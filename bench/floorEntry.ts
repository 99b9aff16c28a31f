// Worker-thread entry of the fan-out floor (bundled by bench/threads.ts): a bare thread that loads the SDK v2 client
// (the one owners run on), connects it to the fixture with the SDK's own stdio transport, then makes one echo call
// and closes when told. Nothing of mcp-worker is in it: it is the least a thread holding one connection can cost.
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { type MessagePort, workerData } from "node:worker_threads"
import type { StdioServer } from "./loops.js"

const { port, server } = workerData as { port: MessagePort; server: StdioServer }

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const client = new Client({ name: "mcp-worker-bench-floor", version: "0.1.0" }, { capabilities: {} })
const transport = new StdioClientTransport({ command: server.command, args: [...server.args], env: { ...server.env } })

port.on("message", (message: { readonly type: "call"; readonly token: string } | { readonly type: "close" }) => {
  if (message.type === "call") {
    client.callTool({ name: "echo", arguments: { token: message.token } }).then(
      () => port.postMessage({ type: "called" }),
      (error) => port.postMessage({ type: "failed", message: errorText(error) })
    )
  } else {
    client.close().then(() => port.close())
  }
})
client.connect(transport).then(
  () => port.postMessage({ type: "ready" }),
  (error) => port.postMessage({ type: "failed", message: errorText(error) })
)
