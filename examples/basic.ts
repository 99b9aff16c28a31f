/**
 * Open the example server in an owner thread, use it through three separate `runPromise` calls, and close it.
 *
 * Run: npx tsx examples/basic.ts
 */
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { exampleServer } from "./config.js"

const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())

const id = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.open(exampleServer)))
console.log("opened", id)

const tools = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.listTools(id)))
console.log(
  "tools:",
  tools.tools.map((tool) => tool.name)
)

// Three isolated runs, one live connection: the counter survives between them.
for (let run = 1; run <= 3; run++) {
  const result = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.callTool(id, "increment")))
  console.log(`run ${run}:`, result.structuredContent)
}

console.log("status:", await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.status(id))))
const closed = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.close(id)))
console.log("closed; processes left:", closed.cleanup?.activeProcesses)
await runtime.dispose()
