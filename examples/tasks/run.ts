/**
 * One run of agent code, holding nothing but plain data: where to reach the host (a socket path and a grant, or the
 * host's own process for a worker thread), a target id, and for later runs the task id an earlier run printed.
 * `MCP_STEP` says what it does: `start` a research task and end, read its `status`, or `collect` its result.
 */
import { makePromiseClient } from "@mcp-worker/node"
import { workerData } from "node:worker_threads"

interface RunInput {
  readonly step: "start" | "status" | "collect"
  readonly target: string
  readonly taskId?: string | undefined
  readonly socket?: string | undefined
}

// A worker thread gets its input as workerData; a sandbox process, as environment variables.
const input: RunInput = workerData ?? {
  step: process.env.MCP_STEP as RunInput["step"],
  target: process.env.MCP_TARGET!,
  taskId: process.env.MCP_TASK,
  socket: process.env.MCP_SOCKET
}

const mcp = input.socket === undefined ? makePromiseClient() : makePromiseClient({ connect: input.socket })
try {
  if (input.step === "start") {
    const { task } = await mcp.startTask(input.target, "simulate-research-query", { topic: "tide pools" })
    console.log(JSON.stringify({ taskId: task.taskId, status: task.status }))
  } else if (input.step === "status") {
    const task = await mcp.getTask(input.target, input.taskId!)
    console.log(JSON.stringify({ status: task.status, statusMessage: task.statusMessage }))
  } else {
    const result = await mcp.taskResult(input.target, input.taskId!, { timeout: "60 seconds" })
    const text = (result.content[0] as { text: string }).text
    console.log(JSON.stringify({ heading: text.slice(0, text.indexOf("\n")) }))
  }
} catch (error) {
  console.log(JSON.stringify({ error: (error as { _tag?: string })._tag, message: (error as Error).message }))
} finally {
  await mcp.dispose()
}
