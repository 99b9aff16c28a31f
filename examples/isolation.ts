/**
 * The owner in a process of its own (`isolation: "process"`), next to one in a thread: the same id and operations,
 * `status.ownerPid` says which process holds the connection. Then the two other shapes of the library: a result
 * written straight to a file (`saveTo`), and `McpClient`, one connection in this thread for one scope.
 *
 * Run: npx tsx examples/isolation.ts
 */
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { exampleServer } from "./config.js"

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const inProcess = yield* workers.open(exampleServer, { isolation: "process", maxOldGenerationSizeMb: 256 })
  const inThread = yield* workers.open(exampleServer)
  for (const id of [inProcess, inThread]) {
    const { structuredContent } = yield* workers.callTool(id, "increment")
    const status = yield* workers.status(id)
    console.log(
      `owner pid ${status.ownerPid ?? "(a thread of this process)"}, thread ${status.threadId}:`,
      structuredContent
    )
  }

  // A large result goes to a file, written by the owner as it is read: it never crosses to this process.
  const file = path.join(os.tmpdir(), `mcp-worker-report-${process.pid}.json`)
  const saved = yield* workers.callTool(inProcess, "report", { lines: 10_000 }, { saveTo: file })
  console.log(`saved ${saved.bytes} bytes to ${saved.path}, sha256 ${saved.sha256.slice(0, 12)}…`)
  fs.rmSync(file)

  // One connection for one job, in this thread, closed with its scope.
  const tools = yield* McpClient.withClient(exampleServer, (client) => client.listTools())
  console.log("McpClient saw tools:", tools.tools.map((tool) => tool.name).join(", "))
})

await Effect.runPromise(Effect.provide(program, NodeMcpWorkers.layer()))
