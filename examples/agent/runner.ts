/**
 * The agent's side of the agent example: the entry of the fresh worker_thread that runs one piece of the agent's code.
 * It gets the worker ids of the host's servers and nothing else, binds each server's tools over its id
 * (`mcp.tools(id)`: every method is `callTool` with the tool's real name), and runs the code with them. Bundled by
 * `main.ts` with esbuild (worker threads get no TypeScript loader, and one file boots fast).
 *
 * A piece of code is the body of an async function of `tools` (`tools.<server>.<tool>(args, options?)`),
 * `isSpilled` (whether a result went to a file because it passed `maxResultBytes`) and `readFile`.
 */
import * as ResultFile from "@mcp-worker/core/ResultFile"
import { makePromiseClient } from "@mcp-worker/node/PromiseClient"
import * as fs from "node:fs/promises"
import { parentPort, workerData } from "node:worker_threads"

/** What the host sends to a run: the code, and the id of each server by its name in the config document. */
export interface RunInput {
  readonly code: string
  readonly ids: Readonly<Record<string, string>>
}

/** What a run sends back: its value, or what it threw (an mcp-worker error keeps its tag). */
export type RunOutput =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: { readonly _tag?: string; readonly message: string } }

const { code, ids } = workerData as RunInput

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

const run = async (): Promise<unknown> => {
  // One binding per server: only the id crosses into this thread, and the binding holds nothing but it.
  const tools = Object.fromEntries(
    await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, await mcp.tools(id)] as const))
  )
  const readFile = (path: string) => fs.readFile(path, "utf8")
  return new AsyncFunction("tools", "isSpilled", "readFile", code)(tools, ResultFile.isSpilled, readFile)
}

const output: RunOutput = await run().then(
  (value) => ({ ok: true as const, value }),
  (error: unknown) => ({ ok: false as const, error: describe(error) })
)
await mcp.dispose()
parentPort!.postMessage(output)
