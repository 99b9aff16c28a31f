// Worker-thread entry of the "callTool from a remote worker_thread" row (bundled by bench/threads.ts). It
// reaches the main thread's host registry through `NodeMcpWorkers.layerRemote` by worker id alone, and also
// runs the SDK client directly in this same thread: the floor for a caller living here.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type MessagePort, workerData } from "node:worker_threads"
import { closeDirect, connectDirect, type Direct, directEchoBlock, type StdioServer, workerEchoBlock } from "./loops.js"

const { port, workerId, server } = workerData as { port: MessagePort; workerId: string; server: StdioServer }

/** `layerRemote` is being written concurrently; until it exists this row reports n/a. */
const layerRemote = (NodeMcpWorkers as unknown as { layerRemote?: Layer.Layer<McpWorkers> }).layerRemote

type Control =
  | { readonly type: "block"; readonly variant: "remote" | "direct"; readonly n: number; readonly tag: string }
  | { readonly type: "close" }

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const main = async () => {
  if (layerRemote === undefined || !Layer.isLayer(layerRemote)) {
    port.postMessage({ type: "unavailable" })
    port.close()
    return
  }
  const runtime = ManagedRuntime.make(layerRemote)
  let direct: Direct | undefined
  try {
    const workers = await runtime.runPromise(McpWorkers)
    direct = await connectDirect(server)
    const d = direct
    port.on("message", (raw: Control) => {
      if (raw.type === "block") {
        const run =
          raw.variant === "remote"
            ? runtime.runPromise(workerEchoBlock(workers, workerId, raw.n, raw.tag))
            : directEchoBlock(d.client, raw.n, raw.tag)
        run.then(
          (samples) => port.postMessage({ type: "block", samples }),
          (error) => port.postMessage({ type: "error", message: errorText(error) })
        )
      } else if (raw.type === "close") {
        void Promise.allSettled([runtime.dispose(), closeDirect(d)]).then(() => {
          port.postMessage({ type: "closed" })
          port.close()
        })
      }
    })
    port.postMessage({ type: "ready" })
  } catch (error) {
    await Promise.allSettled([runtime.dispose(), direct === undefined ? undefined : closeDirect(direct)])
    port.postMessage({ type: "error", message: errorText(error) })
    port.close()
  }
}

void main()
