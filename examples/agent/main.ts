/**
 * An agent host, as one is built over mcp-worker. It reads its servers from a config document (the `mcpServers` file
 * editors write), opens them all at once (`openAll`), and writes the TypeScript declarations of their tools for the
 * agent (`describe`). The agent's code is type-checked against those declarations, then run in a fresh worker_thread
 * that holds nothing but the worker ids and calls the tools through their binding (`tools(id)`). A result too large
 * for an answer spills to a file (`onTooLarge`), which the agent reads. At the end, `closeAll`.
 *
 * The servers: the bundled example server (a counter and a report tool) and the published server-memory, both over
 * stdio; nothing reaches the network.
 *
 * Run: npm run example:agent
 */
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import ts from "typescript"
import type { RunInput, RunOutput } from "./runner.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const require = createRequire(import.meta.url)

/** Past this, a result is not an answer: it spills to a file of the host's spill directory. */
const maxResultBytes = 256 * 1024

/**
 * The host's config document, as `.cursor/mcp.json` holds it. The memory server's file is a reference, filled in from
 * the environment just before that entry opens: the document itself holds no value of it.
 */
const cursorFile = JSON.stringify(
  {
    mcpServers: {
      notes: { command: process.execPath, args: ["--import", "tsx", path.join(root, "examples/server.ts")], cwd: root },
      memory: {
        command: process.execPath,
        args: [require.resolve("@modelcontextprotocol/server-memory/dist/index.js")],
        env: { MEMORY_FILE_PATH: "${env:AGENT_MEMORY_FILE}" }
      }
    }
  },
  null,
  2
)

/** One piece of the agent's code: plain JavaScript, which TypeScript checks against the declarations. */
interface Step {
  readonly title: string
  readonly code: string
}

const remember: Step = {
  title: "remember a fact with server-memory, and read the graph back",
  code: `await tools.memory.create_entities({
  entities: [{ name: "mcp-worker", entityType: "library", observations: ["keeps MCP connections alive by id"] }]
})
const graph = await tools.memory.read_graph({})
if (graph.isError) return "read_graph failed"
return graph.structuredContent.entities.map((entity) => entity.name + ": " + entity.observations.join("; "))`
}

const count: Step = {
  title: "count with the notes server, from a fresh thread: the count lives in the server",
  code: `const result = await tools.notes.increment({})
return result.structuredContent`
}

const typo: Step = {
  title: "a typo: the compiler refuses it, and nothing is sent",
  code: `return await tools.notes.incremnt({})`
}

const report: Step = {
  title: "a report too large for an answer: it spills to a file, which the agent reads",
  code: `const result = await tools.notes.report({ lines: 40000 })
if (!isSpilled(result)) return { inline: result.content.length }
const text = JSON.parse(await readFile(result.path)).content[0].text
return { spilled: result.spilled, path: result.path, bytes: result.bytes, lines: text.split("\\n").length,
  first: result.preview?.slice(0, result.preview.indexOf("\\n")) }`
}

// What the agent's code sees besides the declarations, for the compiler.
const prelude = (names: ReadonlyArray<string>) =>
  [
    `import type { ${names.map(namespaceOf).join(", ")} } from "./tools"`,
    `declare const tools: { ${names.map((name) => `readonly ${name}: ${namespaceOf(name)}.Tools`).join("; ")} }`,
    `declare function isSpilled(result: unknown): result is ${namespaceOf(names[0]!)}.SpilledResult`,
    `declare function readFile(path: string): Promise<string>`,
    `export async function agent(): Promise<unknown> {`
  ].join("\n")

const namespaceOf = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)

const compilerOptions: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts"],
  types: [],
  skipLibCheck: true
}

// The compiler's own library files, parsed once for every step.
const base = ts.createCompilerHost(compilerOptions)
const libraries = new Map<string, ts.SourceFile | undefined>()

/** The compiler's word on a step, against the declarations: one line per error, where it is in the step. */
const typeCheck = (declarations: string, names: ReadonlyArray<string>, step: Step): ReadonlyArray<string> => {
  const head = prelude(names)
  const files: Record<string, string> = {
    "/agent/tools.ts": declarations,
    "/agent/agent.ts": `${head}\n${step.code}\n}\n`
  }
  const host: ts.CompilerHost = {
    ...base,
    fileExists: (name) => Object.hasOwn(files, name) || base.fileExists(name),
    directoryExists: (name) => name === "/agent" || base.directoryExists!(name),
    readFile: (name) => (Object.hasOwn(files, name) ? files[name] : base.readFile(name)),
    getSourceFile: (name, language) => {
      if (Object.hasOwn(files, name)) return ts.createSourceFile(name, files[name]!, language, true)
      if (!libraries.has(name)) libraries.set(name, base.getSourceFile(name, language))
      return libraries.get(name)
    }
  }
  const program = ts.createProgram(Object.keys(files), compilerOptions, host)
  const offset = head.split("\n").length
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
    const at = where === undefined ? "" : `line ${where.line + 1 - offset}: `
    return `${at}${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
  })
}

/** The agent's entry, bundled into the run's scratch directory. */
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

/** Runs one step in a fresh thread, with the worker ids only, and waits until that thread has exited. */
const execute = (runner: string, ids: Readonly<Record<string, string>>, step: Step) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new Worker(runner, { workerData: { code: step.code, ids } satisfies RunInput })),
    (thread) =>
      Effect.async<RunOutput, Error>((resume) => {
        let output: RunOutput | undefined
        thread.on("message", (message: RunOutput) => {
          output = message
        })
        thread.on("error", (error) => resume(Effect.fail(error)))
        thread.on("exit", (code) =>
          resume(
            output === undefined
              ? Effect.fail(new Error(`the agent's thread exited with ${code}`))
              : Effect.succeed(output)
          )
        )
      }),
    (thread) => Effect.promise(() => thread.terminate())
  ).pipe(Effect.timed)

const show = (output: RunOutput): string =>
  output.ok ? `⇒ ${JSON.stringify(output.value)}` : `✗ ${output.error._tag ?? "Error"}: ${output.error.message}`

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const workdir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-agent-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const spill = path.join(workdir, "spill")
  fs.mkdirSync(spill)

  // 1. The config document, read as the editor wrote it; every entry opens at once, each with the host's spill.
  const document = Either.getOrThrow(McpConfig.fromCursor(cursorFile))
  const opened = yield* workers.openAll(document, {
    environment: { AGENT_MEMORY_FILE: path.join(workdir, "memory.jsonl") },
    open: { timeout: "30 seconds", onTooLarge: { spill } }
  })
  const ids = OpenAll.ids(opened)
  for (const [name, entry] of Object.entries(opened)) {
    if (entry._tag === "Failed") {
      yield* Console.log(`${name}: did not open (${entry.error._tag}: ${entry.error.message})`)
      continue
    }
    const status = yield* workers.status(entry.id)
    yield* Console.log(`${name}: opened ${entry.id}, server pid ${status.pid}, ${status.server?.name}`)
  }
  const names = Object.keys(ids)

  // 2. The declarations the agent writes its code against: one namespace per server.
  const rendered = yield* Effect.forEach(names, (name) =>
    workers.describe(ids[name]!, { namespace: namespaceOf(name), title: name })
  )
  const declarations = rendered.join("\n")
  fs.writeFileSync(path.join(workdir, "tools.d.ts"), declarations)
  // Each tool's plain signature (its other overloads take saveTo or a spill).
  const signature = /^ {4}(\w+)\((args\??: \w+), options\?: ToolCallOptions\): (Promise<\w+>)$/gm
  yield* Console.log(`\ntools.d.ts, ${declarations.split("\n").length} lines:`)
  for (const [i, name] of names.entries()) {
    const [first, ...others] = Array.from(rendered[i]!.matchAll(signature)).map((m) => `${m[1]}(${m[2]}): ${m[3]}`)
    yield* Console.log(`   tools.${name}.${first}, and ${others.length} more`)
  }

  // 3. The agent's code, step by step: checked by the compiler, then run in a fresh thread that holds only the ids.
  const runner = yield* bundleRunner(workdir)
  let run = 0
  for (const step of [remember, count, count, typo, report]) {
    yield* Console.log(`\n── step ${++run} · ${step.title}`)
    yield* Console.log(step.code.replace(/^/gm, "   │ "))
    const errors = typeCheck(declarations, names, step)
    if (errors.length > 0) {
      yield* Console.log(`   ✗ does not compile, not run: ${errors.join("; ")}`)
      continue
    }
    const [took, output] = yield* execute(runner, ids, step)
    yield* Console.log(`   ${show(output)} (${Math.round(Duration.toMillis(took))} ms)`)
  }

  // 4. Every worker closed, each with its own confirmed cleanup. The spilled file is the caller's: it stays.
  const closed = yield* workers.closeAll(opened)
  yield* Console.log("")
  for (const [name, entry] of Object.entries(closed)) {
    yield* Console.log(
      entry._tag === "Closed"
        ? `${name}: ${entry.status.state}, ${entry.status.cleanup?.activeProcesses} processes left`
        : `${name}: ${entry._tag}`
    )
  }
  yield* Console.log(`spilled files after closeAll: ${fs.readdirSync(spill).length}`)
})

await Effect.runPromise(
  program.pipe(
    Effect.scoped,
    Effect.provide(NodeMcpWorkers.layer({ maxResultBytes })),
    // The host's own info logs (worker opened/closed) would interleave with the steps.
    Logger.withMinimumLogLevel(LogLevel.Warning)
  )
)
