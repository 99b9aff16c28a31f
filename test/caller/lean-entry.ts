// A fresh worker thread that reaches a worker with the lean client only: bundled by LeanThread.test.ts, whose check
// proves that nothing but @mcp-worker/caller is in the bundle (C107).
import { makeClient } from "@mcp-worker/caller/Client"
import { parentPort, workerData } from "node:worker_threads"

const { workerId } = workerData as { readonly workerId: string }

const main = async () => {
  const mcp = makeClient()
  try {
    const first = await mcp.callTool(workerId, "inc", {})
    const tools = await mcp.tools(workerId)
    const second = await tools.inc!({})
    const status = await mcp.status(workerId)
    // C150: the replies came on ports, so the thread never built a `MessageEvent` (Node loads it from undici).
    const messageEvent = (process as unknown as { moduleLoadList: Array<string> }).moduleLoadList.some((loaded) =>
      loaded.includes("undici")
    )
    return { first: first.structuredContent, second: second.structuredContent, state: status.state, messageEvent }
  } finally {
    await mcp.dispose()
  }
}

main().then(
  (value) => parentPort!.postMessage({ ok: true, value }),
  (error: unknown) =>
    parentPort!.postMessage({ ok: false, tag: (error as { _tag?: string })._tag, error: String(error) })
)
