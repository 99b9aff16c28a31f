// The measured loops, shared by the main thread and the bench's own worker-thread entries (bundled by
// bench/threads.ts): the direct SDK client, the McpWorkers echo loop, and a wire-level probe for SDK transports.
import type { McpWorkersService } from "@mcp-worker/core/McpWorkers"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"

/** A stdio fixture server, as plain data (it crosses into the bench's threads). */
export interface StdioServer {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** An SDK client used directly in the calling thread: the floor for any thread-owned design. */
export interface Direct {
  readonly client: Client
  readonly transport: StdioClientTransport
}

export const connectDirect = async (server: StdioServer, wire?: WireTimes): Promise<Direct> => {
  const transport = new StdioClientTransport({
    command: server.command,
    args: [...server.args],
    env: { ...server.env }
  })
  if (wire !== undefined) instrumentTransport(transport, wire)
  const client = new Client({ name: "mcp-worker-bench", version: "0.1.0" }, { capabilities: {} })
  await client.connect(transport)
  return { client, transport }
}

/** The fixtures run with `--exit-on-stdin-eof`, so the SDK's own close (stdin EOF, then wait) is prompt. */
export const closeDirect = (direct: Direct): Promise<void> => direct.client.close()

const tokenOf = (result: unknown): unknown =>
  (result as { structuredContent?: { token?: unknown } }).structuredContent?.token

/** What the echo loops call: the SDK's `Client.callTool`, of either major version. */
export interface EchoClient {
  readonly callTool: (request: {
    readonly name: string
    readonly arguments: { readonly token: string }
  }) => Promise<unknown>
}

/** `n` sequential echo calls through the SDK directly (either major version); per-call latencies in ms. */
export const directEchoBlock = async (client: EchoClient, n: number, tag: string): Promise<Array<number>> => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const token = `${tag}${i}`
    const t0 = performance.now()
    const result = await client.callTool({ name: "echo", arguments: { token } })
    out.push(performance.now() - t0)
    if (tokenOf(result) !== token) throw new Error(`direct echo returned the wrong token`)
  }
  return out
}

/** `n` sequential echo calls through `McpWorkers.callTool`, inside one Effect; per-call latencies in ms. */
export const workerEchoBlock = (
  workers: McpWorkersService,
  workerId: string,
  n: number,
  tag: string
): Effect.Effect<Array<number>, unknown> =>
  Effect.gen(function* () {
    const out: Array<number> = []
    for (let i = 0; i < n; i++) {
      const token = `${tag}${i}`
      const t0 = performance.now()
      const result = yield* workers.callTool(workerId, "echo", { token })
      out.push(performance.now() - t0)
      if (tokenOf(result) !== token) return yield* Effect.dieMessage("worker echo returned the wrong token")
    }
    return out
  })

/** When the last `tools/call` left through `send`, and when the last response came back (`performance.now()`). */
export interface WireTimes {
  send: number
  reply: number
}

/**
 * Wraps an SDK `Transport` (before the client connects it) so that the last `tools/call` write and the last
 * response read are timestamped. Bench-only instrumentation: the library itself is not touched.
 */
export const instrumentTransport = (transport: Transport, wire: WireTimes): void => {
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    if ("method" in message && message.method === "tools/call") wire.send = performance.now()
    return send(message, options)
  }
  let handler: Transport["onmessage"]
  const wrapped = (message: JSONRPCMessage, extra?: unknown) => {
    if ("result" in message || "error" in message) wire.reply = performance.now()
    ;(handler as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(message, extra)
  }
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => (handler === undefined ? undefined : wrapped),
    set: (fn: Transport["onmessage"]) => {
      handler = fn
    }
  })
}
