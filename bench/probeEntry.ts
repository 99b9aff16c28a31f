// Worker-thread entry of the profiling probe (bundled by bench/threads.ts). Three modes, chosen by workerData:
// - "echo": bounces every message back on its port, to time a bare host → thread → host hop;
// - "owner": a replica owner thread built from the library's own `Owner.make` (core) over the SDK's
//   `StdioClientTransport`, with timestamps at the port edges and on the wire (bench-only instrumentation; src is
//   untouched, and no `internal/` module of the library is imported, so the replica survives refactors there);
// - "sdk": the SDK client used directly inside a worker thread, with the same wire timestamps.
import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import * as Owner from "@mcp-worker/core/protocol/Owner"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type MessagePort, workerData } from "node:worker_threads"
import {
  closeDirect,
  connectDirect,
  type Direct,
  instrumentTransport,
  type StdioServer,
  type WireTimes
} from "./loops.js"

/** Owner-side timestamps (this thread's `performance.now()`) attached to the replica's replies. */
export interface OwnerTimes {
  /** The request message reached the owner's port listener. */
  readonly tIn: number
  /** The SDK wrote the `tools/call` to the server's stdin. */
  readonly tSend: number
  /** The server's response was read from stdout and framed. */
  readonly tReply: number
  /** The owner posted its answer to the host. */
  readonly tOut: number
}

/** Per-call splits of the SDK used directly in this thread (ms). */
export interface SdkSplits {
  readonly total: Array<number>
  readonly pre: Array<number>
  readonly pipe: Array<number>
  readonly post: Array<number>
}

const { mode, port } = workerData as { mode: "echo" | "owner" | "sdk"; port: MessagePort }

type Control =
  | { readonly type: "open"; readonly server: StdioServer; readonly workerId: string; readonly marker: string }
  | { readonly type: "block"; readonly n: number; readonly tag: string }
  | { readonly type: "close" }

const isControl = (raw: unknown): raw is Control =>
  typeof raw === "object" && raw !== null && typeof (raw as { type?: unknown }).type === "string"

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

if (mode === "echo") {
  port.on("message", (message: unknown) => {
    if (isControl(message) && message.type === "close") {
      port.postMessage({ type: "closed" })
      return port.close()
    }
    port.postMessage(message)
  })
}

const noCleanup: CleanupSummary = {
  activeProcesses: 0,
  signalled: { term: 0, kill: 0 },
  escaped: 0,
  durationMs: 0,
  sessionTerminated: null
}

if (mode === "owner") {
  const wire: WireTimes = { send: 0, reply: 0 }
  let tIn = 0
  let server: StdioServer | undefined
  // The SDK's own stdio transport stands in for the library's process job: same line framing, same pipes.
  const factory: Owner.TransportFactory = (_config, context) =>
    Effect.sync(() => {
      const transport = new StdioClientTransport({
        command: server!.command,
        args: [...server!.args],
        env: { ...server!.env, MCP_WORKER_JOB: context.marker }
      })
      instrumentTransport(transport, wire)
      const owned: Owner.OwnerTransport = {
        transport,
        get pid() {
          return transport.pid
        },
        stop: () =>
          Effect.as(
            Effect.promise(() => transport.close()),
            noCleanup
          ),
        exitInfo: () => Effect.succeed({})
      }
      return owned
    })
  const owner = Owner.make({
    port: {
      post: (message) => {
        const bench: OwnerTimes = { tIn, tSend: wire.send, tReply: wire.reply, tOut: performance.now() }
        port.postMessage({ ...message, bench })
      }
    },
    factory
  })
  port.on("message", (raw: unknown) => {
    if (!isControl(raw)) {
      tIn = performance.now()
      return owner.onMessage(raw)
    }
    if (raw.type === "open") {
      const { workerId, marker } = raw
      server = raw.server
      const open = new OwnerProtocol.Open({
        workerId,
        marker,
        config: JSON.stringify({ command: server.command, args: server.args, env: server.env }),
        timeoutMs: 20_000
      })
      void Effect.runPromise(Effect.either(owner.open(open))).then((result) =>
        port.postMessage(Either.isRight(result) ? { type: "opened" } : { type: "error", message: result.left.message })
      )
    } else if (raw.type === "close") {
      void Effect.runPromise(owner.close(3_000)).then((cleanup) => {
        port.postMessage({ type: "closed", cleanup })
        port.close()
      })
    }
  })
}

if (mode === "sdk") {
  const wire: WireTimes = { send: 0, reply: 0 }
  let direct: Direct | undefined
  port.on("message", (raw: unknown) => {
    if (!isControl(raw)) return
    if (raw.type === "open") {
      connectDirect(raw.server, wire).then(
        (d) => {
          direct = d
          port.postMessage({ type: "opened" })
        },
        (error) => port.postMessage({ type: "error", message: errorText(error) })
      )
    } else if (raw.type === "block") {
      const { n, tag } = raw
      void (async () => {
        const splits: SdkSplits = { total: [], pre: [], pipe: [], post: [] }
        for (let i = 0; i < n; i++) {
          const t0 = performance.now()
          await direct!.client.callTool({ name: "echo", arguments: { token: `${tag}${i}` } })
          const t1 = performance.now()
          splits.total.push(t1 - t0)
          splits.pre.push(wire.send - t0)
          splits.pipe.push(wire.reply - wire.send)
          splits.post.push(t1 - wire.reply)
        }
        port.postMessage({ type: "block", splits })
      })()
    } else if (raw.type === "close") {
      const d = direct
      void (d === undefined ? Promise.resolve() : closeDirect(d)).then(() => {
        port.postMessage({ type: "closed" })
        port.close()
      })
    }
  })
}
