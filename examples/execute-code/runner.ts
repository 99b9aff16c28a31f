/**
 * The sandbox side of the execute-code example: the entry of the fresh worker_thread that runs one snippet.
 * Bundled by `main.ts` with esbuild (worker threads get no TypeScript loader, and one file boots fast).
 *
 * A snippet is the body of an async function of `mcp` (a Promise client of the host's workers: it knows nothing
 * but ids), `store` (the host's key-value scratch store, kept between runs) and `workdir` (a scratch directory).
 */
import { makePromiseClient } from "@mcp-worker/node/PromiseClient"
import { parentPort, workerData } from "node:worker_threads"
import type { MessagePort } from "node:worker_threads"

/** What the host sends to a run. */
export interface RunInput {
  readonly code: string
  readonly store: MessagePort
  readonly workdir: string
}

/** What a run sends back: its value, or what it threw (an mcp-worker error keeps its tag and fields). */
export type RunOutput =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: { readonly _tag?: string; readonly message: string } }

const { code, store: port, workdir } = workerData as RunInput

// The store lives in the host: every get/set is one message on this run's own port.
let nextId = 0
const waiting = new Map<number, (value: unknown) => void>()
port.on("message", (message: { id: number; value: unknown }) => {
  waiting.get(message.id)?.(message.value)
  waiting.delete(message.id)
})
const ask = (op: "get" | "set", key: string, value?: unknown) =>
  new Promise<unknown>((resolve) => {
    const id = nextId++
    waiting.set(id, resolve)
    port.postMessage({ id, op, key, value })
  })
const store = {
  get: (key: string) => ask("get", key),
  set: (key: string, value: unknown) => ask("set", key, value).then(() => undefined)
}

const mcp = makePromiseClient()
const AsyncFunction = (async () => {}).constructor as new (
  ...params: Array<string>
) => (...args: Array<unknown>) => Promise<unknown>

const describe = (error: unknown): { _tag?: string; message: string } => {
  if (typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string") {
    return { _tag: error._tag, message: String((error as { message?: unknown }).message) }
  }
  return { message: error instanceof Error ? error.message : String(error) }
}

const output: RunOutput = await new AsyncFunction("mcp", "store", "workdir", code)(mcp, store, workdir).then(
  (value) => ({ ok: true as const, value }),
  (error: unknown) => ({ ok: false as const, error: describe(error) })
)
await mcp.dispose()
port.close()
parentPort!.postMessage(output)
