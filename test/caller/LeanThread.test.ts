// C107: a fresh worker thread that imports the lean client loads nothing but @mcp-worker/caller (no Effect, no MCP
// SDK), and reaches a worker of this thread's host by id.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { statefulConfig } from "../fixtures/servers.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const callerSources = path.join("packages", "caller", "src") + path.sep

// The entry bundled as a thread would load it; the metafile names every module the bundle holds and what it imports.
const bundle = async (dir: string) => {
  const outfile = path.join(dir, "lean-entry.mjs")
  const result = await esbuild.build({
    entryPoints: [path.join(here, "lean-entry.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    tsconfig: path.join(root, "tsconfig.json"),
    absWorkingDir: root,
    metafile: true,
    logLevel: "warning"
  })
  return { outfile, metafile: result.metafile }
}

const runThread = (entry: string, workerId: string) =>
  new Promise<{ readonly ok: boolean; readonly value?: any; readonly tag?: string; readonly error?: string }>(
    (resolve, reject) => {
      const thread = new Worker(entry, { workerData: { workerId }, name: "lean caller" })
      let message: any
      thread.once("message", (m) => (message = m))
      thread.once("error", reject)
      // The thread must end by itself once it has answered: the lean client keeps nothing alive when idle.
      thread.once("exit", (code) =>
        message === undefined ? reject(new Error(`thread exited with ${code} before answering`)) : resolve(message)
      )
    }
  )

describe("the lean client in a fresh thread (C107)", () => {
  it.live("bundles nothing but @mcp-worker/caller and calls a worker of the host", () =>
    Effect.promise(async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-lean-"))
      const runtime = ManagedRuntime.make(NodeMcpWorkers.layer())
      try {
        const { outfile, metafile } = await bundle(dir)
        const inputs = Object.keys(metafile.inputs)
        const foreign = inputs.filter(
          (input) => input !== "test/caller/lean-entry.ts" && !input.startsWith(callerSources)
        )
        assert.deepStrictEqual(foreign, [], "modules from outside @mcp-worker/caller")
        assert.isTrue(inputs.some((input) => input.startsWith(callerSources + "internal/thread/")))
        for (const input of inputs) assert.notMatch(input, /node_modules|effect|modelcontextprotocol/)
        // What the bundle still imports at run time: Node's own modules, and the socket plane on first `connect`
        // (a module of this package: once it is in the tree, it is bundled and its inputs are checked above).
        const imports = Object.values(metafile.outputs).flatMap((output) => output.imports)
        for (const imported of imports) {
          assert.isTrue(imported.external, `${imported.path} is bundled, not imported`)
          const socketPlane = imported.kind === "dynamic-import" && imported.path === "./internal/socket/index.js"
          if (!socketPlane) assert.match(imported.path, /^node:/)
        }

        const id = await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.open(statefulConfig())))
        await runtime.runPromise(Effect.flatMap(McpWorkers, (workers) => workers.callTool(id, "inc", {})))
        const answer = await runThread(outfile, id)
        assert.deepStrictEqual(answer, {
          ok: true,
          value: { first: { count: 2 }, second: { count: 3 }, state: "ready", messageEvent: false }
        })
      } finally {
        await runtime.dispose()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
