/**
 * An agent-style host with an `execute_code` tool: every snippet runs in a fresh worker_thread that gets nothing
 * but a Promise client (`makePromiseClient()`) and a key-value scratch store kept by the host between runs. One
 * live MCP connection (the bundled example server, with a counter in its memory) serves all of them: the
 * snippets pass its id through the store, never a client object.
 *
 * Run: npm run demo
 */
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as esbuild from "esbuild"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads"
import { exampleServer } from "../config.js"
import type { RunInput, RunOutput } from "./runner.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")

/** One `execute_code` call as an agent would send it: a title for the reader, and JavaScript. */
interface Snippet {
  readonly title: string
  readonly code: string
}

const open: Snippet = {
  title: "open the example server; keep only its id",
  code: `const id = await mcp.open(await store.get("serverConfig"))
await store.set("workerId", id)
const { state, pid } = await mcp.status(id)
return { id, state, pid }`
}

const listTools: Snippet = {
  title: "list its tools from a fresh thread, by id",
  code: `const { tools } = await mcp.listTools(await store.get("workerId"))
return tools.map((tool) => tool.name)`
}

const increment: Snippet = {
  title: "call the stateful tool: the count lives in the server",
  code: `const result = await mcp.callTool(await store.get("workerId"), "increment")
return result.structuredContent`
}

const slow: Snippet = {
  title: "two snippets at once on one worker: one request at a time, nothing queued",
  code: `const result = await mcp.callTool(await store.get("workerId"), "slow", { ms: 1200 })
return result.content[0].text`
}

const report: Snippet = {
  title: "a large result: write it to a file, return the path and a summary",
  code: `const result = await mcp.callTool(await store.get("workerId"), "report", { lines: 20000 })
const text = result.content[0].text
const fs = await import("node:fs/promises")
const file = workdir + "/report.txt"
await fs.writeFile(file, text)
return { file, bytes: text.length, lines: text.split("\\n").length, first: text.slice(0, text.indexOf("\\n")) }`
}

const close: Snippet = {
  title: "close the worker: the server's whole process tree ends",
  code: `const status = await mcp.close(await store.get("workerId"))
await store.set("workerId", null)
return { state: status.state, activeProcesses: status.cleanup.activeProcesses }`
}

/** The sandbox entry, bundled into the run's scratch directory. */
const bundleRunner = (workdir: string) =>
  Effect.promise(() =>
    esbuild.build({
      entryPoints: [path.join(here, "runner.ts")],
      outfile: path.join(workdir, "runner.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      // The root tsconfig maps `@mcp-worker/*` to the sources: nothing needs to be built first.
      tsconfig: path.join(root, "tsconfig.json"),
      minify: true,
      logLevel: "warning"
    })
  ).pipe(Effect.as(path.join(workdir, "runner.mjs")))

/** Answers a run's `store.get` / `store.set`. */
const serveStore = (store: Map<string, unknown>, port: MessagePort) =>
  port.on("message", (message: { id: number; op: "get" | "set"; key: string; value: unknown }) => {
    if (message.op === "set") store.set(message.key, message.value)
    port.postMessage({ id: message.id, value: store.get(message.key) ?? null })
  })

/** Runs one snippet in a fresh thread and waits until that thread has exited. */
const execute = (runner: string, workdir: string, store: Map<string, unknown>, snippet: Snippet) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const channel = new MessageChannel()
      serveStore(store, channel.port1)
      const input: RunInput = { code: snippet.code, store: channel.port2, workdir }
      const thread = new Worker(runner, { workerData: input, transferList: [channel.port2] })
      return { thread, port: channel.port1 }
    }),
    ({ thread }) =>
      Effect.async<RunOutput, Error>((resume) => {
        let output: RunOutput | undefined
        thread.on("message", (message: RunOutput) => {
          output = message
        })
        thread.on("error", (error) => resume(Effect.fail(error)))
        thread.on("exit", (code) =>
          resume(
            output === undefined
              ? Effect.fail(new Error(`the run's thread exited with ${code}`))
              : Effect.succeed(output)
          )
        )
      }),
    ({ port, thread }) => Effect.promise(() => thread.terminate()).pipe(Effect.andThen(Effect.sync(() => port.close())))
  ).pipe(Effect.timed)

const show = (output: RunOutput): string =>
  output.ok ? `⇒ ${JSON.stringify(output.value)}` : `✗ ${output.error._tag ?? "Error"}: ${output.error.message}`

const header = (run: string, title: string, took: Duration.Duration) =>
  Console.log(`\n── run ${run} · ${title} (${Math.round(Duration.toMillis(took))} ms)`)

const code = (snippet: Snippet) => Console.log(snippet.code.replace(/^/gm, "   │ "))

const program = Effect.gen(function* () {
  const workdir = yield* Effect.acquireRelease(
    Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "mcp-worker-demo-"))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )
  const runner = yield* bundleRunner(workdir)
  const store = new Map<string, unknown>([["serverConfig", exampleServer]])
  yield* Console.log("execute_code demo: every run is a fresh worker_thread with only `mcp` and `store`")

  let run = 0
  for (const snippet of [open, listTools, increment, increment]) {
    const [took, output] = yield* execute(runner, workdir, store, snippet)
    yield* header(String(++run), snippet.title, took)
    yield* code(snippet)
    yield* Console.log(`   ${show(output)}`)
  }

  const [a, b] = yield* Effect.all([execute(runner, workdir, store, slow), execute(runner, workdir, store, slow)], {
    concurrency: "unbounded"
  })
  yield* header(String(++run), slow.title, Duration.max(a[0], b[0]))
  yield* code(slow)
  yield* Console.log(`   snippet A (${Math.round(Duration.toMillis(a[0]))} ms) ${show(a[1])}`)
  yield* Console.log(`   snippet B (${Math.round(Duration.toMillis(b[0]))} ms) ${show(b[1])}`)

  for (const snippet of [report, close]) {
    const [took, output] = yield* execute(runner, workdir, store, snippet)
    yield* header(String(++run), snippet.title, took)
    yield* code(snippet)
    yield* Console.log(`   ${show(output)}`)
  }
  yield* Console.log(
    `\n${run} runs in ${run + 1} fresh threads shared one MCP connection, known to them only by its id.`
  )
})

await Effect.runPromise(
  program.pipe(
    Effect.scoped,
    Effect.provide(NodeMcpWorkers.layer()),
    // The host's own info logs (worker opened/closed) would interleave with the runs.
    Logger.withMinimumLogLevel(LogLevel.Warning)
  )
)
