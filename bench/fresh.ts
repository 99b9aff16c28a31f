// `BENCH_ROWS=fresh npm run bench`: what a fresh run pays to make one call to a worker that is already open — the
// scenario the library exists for. Each sample is a new worker thread of the host's process, or a new sandbox
// process over the host's socket (Node, Deno, Bun), timed from its start to its first result, beside the same
// start of a program that imports nothing (the floor), interleaved sample by sample. The built packages (`dist`)
// are imported as an installed package would be: a bundle would hide the cost of loading a module graph.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import * as McpGrants from "../packages/node/src/McpGrants.js"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import { median, quantile } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")
const fixture = path.join(root, "test/fixtures/dist/stateful.mjs")
const samples = Number(process.env.BENCH_FRESH_SAMPLES ?? 10)

// The packages as a user installs them: compiled, not bundled.
execFileSync(
  process.execPath,
  [path.join(root, "node_modules/typescript/bin/tsc"), "-b", "packages/caller", "packages/node"],
  {
    cwd: root,
    stdio: "inherit"
  }
)
const callerEntry = pathToFileURL(path.join(root, "packages/caller/dist/index.js")).href
const nodePromiseEntry = pathToFileURL(path.join(root, "packages/node/dist/PromiseClient.js")).href

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-fresh-"))
fs.chmodSync(dir, 0o700)
const write = (name: string, text: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

// A thread posts `{ rss? }` once it has its result; a process prints one JSON line and exits.
const threadFloor = write(
  "thread-floor.mjs",
  `import { parentPort } from "node:worker_threads"\nparentPort.postMessage({})\n`
)
const threadCall = (entry: string, make: string) =>
  `import { parentPort, workerData } from "node:worker_threads"
import { ${make} } from ${JSON.stringify(entry)}
const mcp = ${make}()
const result = await mcp.callTool(workerData.id, "echo", { token: "fresh" })
parentPort.postMessage({ ok: JSON.stringify(result).includes("fresh") })
await mcp.dispose()
`
const threadLean = write("thread-lean.mjs", threadCall(callerEntry, "makeClient"))
const threadEffect = write("thread-effect.mjs", threadCall(nodePromiseEntry, "makePromiseClient"))

const processFloor = write(
  "process-floor.mjs",
  `const rss = (globalThis.process?.memoryUsage?.().rss) ?? 0\nconsole.log(JSON.stringify({ ok: true, rss }))\n`
)
const processCall = (entry: string, make: string) =>
  `import { ${make} } from ${JSON.stringify(entry)}
const [socket, grant] = (globalThis.Deno?.args ?? process.argv.slice(2))
const mcp = ${make}({ connect: socket })
const result = await mcp.callTool(grant, "echo", { token: "fresh" })
const rss = globalThis.process?.memoryUsage?.().rss ?? 0
console.log(JSON.stringify({ ok: JSON.stringify(result).includes("fresh"), rss }))
await mcp.dispose()
`
const processLean = write("process-lean.mjs", processCall(callerEntry, "makeClient"))
const processEffect = write("process-effect.mjs", processCall(nodePromiseEntry, "makePromiseClient"))

interface Sample {
  readonly ms: number
  readonly rss: number
}

const inThread = (file: string, id: string) =>
  new Promise<Sample>((resolve, reject) => {
    const started = performance.now()
    // A plain Node thread, as a host's runner starts one: not one with this bench's TypeScript loader (tsx).
    const worker = new Worker(file, { workerData: { id }, execArgv: [] })
    worker.once("message", (message: { ok?: boolean }) => {
      const ms = performance.now() - started
      if (message.ok === false) reject(new Error(`${file}: wrong result`))
      else resolve({ ms, rss: 0 })
      void worker.terminate()
    })
    worker.once("error", reject)
  })

const inProcess = (argv: ReadonlyArray<string>) =>
  new Promise<Sample>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      out += chunk
      const newline = out.indexOf("\n")
      if (newline === -1) return
      const ms = performance.now() - started
      const line = JSON.parse(out.slice(0, newline)) as { ok: boolean; rss: number }
      if (!line.ok) reject(new Error(`${argv.join(" ")}: wrong result`))
      else resolve({ ms, rss: line.rss })
    })
    child.once("error", reject)
  })

const platformBinary = (pkg: string, file: string): string | undefined => {
  const found = path.join(root, "node_modules", pkg, file)
  return fs.existsSync(found) ? found : undefined
}
const deno = platformBinary(`@deno/${process.platform}-${process.arch}-glibc`, "deno")
const bun = platformBinary(`@oven/bun-${process.platform}-${process.arch === "x64" ? "x64" : "aarch64"}`, "bin/bun")

const socket = path.join(dir, "host.sock")
const runtime = ManagedRuntime.make(
  Layer.merge(NodeMcpWorkers.layerListen({ path: socket }), Logger.minimumLogLevel(LogLevel.Warning))
)

interface Row {
  readonly label: string
  readonly floor: string
  readonly run: () => Promise<Sample>
  readonly floorRun: () => Promise<Sample>
  readonly addMs?: number
  readonly addRssMiB?: number
}

try {
  const { id, grant } = await runtime.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] })
      const grant = yield* (yield* McpGrants.McpGrants).grant(id)
      return { id, grant }
    })
  )
  const node = process.execPath
  const rows: Array<Row> = [
    {
      label: "fresh worker thread → first result, @mcp-worker/caller",
      floor: "empty thread",
      run: () => inThread(threadLean, id),
      floorRun: () => inThread(threadFloor, id),
      addMs: 30
    },
    {
      label: "  same, @mcp-worker/node makePromiseClient",
      floor: "empty thread",
      run: () => inThread(threadEffect, id),
      floorRun: () => inThread(threadFloor, id)
    },
    {
      label: "fresh node process over the socket, @mcp-worker/caller",
      floor: "node empty.mjs",
      run: () => inProcess([node, processLean, socket, grant]),
      floorRun: () => inProcess([node, processFloor]),
      addMs: 40,
      addRssMiB: 8
    },
    {
      label: "  same, @mcp-worker/node makePromiseClient",
      floor: "node empty.mjs",
      run: () => inProcess([node, processEffect, socket, grant]),
      floorRun: () => inProcess([node, processFloor])
    },
    ...(deno === undefined
      ? []
      : [
          {
            label: "fresh Deno sandbox over the socket, @mcp-worker/caller",
            floor: "deno run empty.mjs",
            run: () => inProcess([deno, "run", "-A", processLean, socket, grant]),
            floorRun: () => inProcess([deno, "run", "-A", processFloor])
          }
        ]),
    ...(bun === undefined
      ? []
      : [
          {
            label: "fresh Bun sandbox over the socket, @mcp-worker/caller",
            floor: "bun empty.mjs",
            run: () => inProcess([bun, processLean, socket, grant]),
            floorRun: () => inProcess([bun, processFloor])
          }
        ])
  ]
  const measured = rows.map(() => ({ run: [] as Array<Sample>, floor: [] as Array<Sample> }))
  // One warm-up of each, then samples interleaved row by row, floor and run alternating which goes first.
  for (const row of rows) await Promise.all([row.run(), row.floorRun()].map((p) => p.catch((e) => e)))
  for (let i = 0; i < samples; i++) {
    for (const [r, row] of rows.entries()) {
      const pair = i % 2 === 0 ? [row.floorRun, row.run] : [row.run, row.floorRun]
      const first = await pair[0]!()
      const second = await pair[1]!()
      const [floor, run] = i % 2 === 0 ? [first, second] : [second, first]
      measured[r]!.floor.push(floor)
      measured[r]!.run.push(run)
    }
    process.stderr.write(`[fresh] sample ${i + 1}/${samples}\n`)
  }
  const ms = (xs: ReadonlyArray<number>) =>
    `${median(xs).toFixed(1)} ms (${quantile(xs, 0.1).toFixed(1)}–${quantile(xs, 0.9).toFixed(1)})`
  const mib = (x: number) => `${(x / 1048576).toFixed(1)} MiB`
  const lines = [
    "| fresh run, one call | target | median (p10–p90) | floor | floor median | added | RSS | added RSS | |",
    "|---|---|---|---|---|---|---|---|---|"
  ]
  for (const [r, row] of rows.entries()) {
    const run = measured[r]!.run
    const floor = measured[r]!.floor
    const added = median(run.map((s) => s.ms)) - median(floor.map((s) => s.ms))
    const rss = median(run.map((s) => s.rss))
    const addedRss = rss - median(floor.map((s) => s.rss))
    const target = [
      row.addMs === undefined ? "" : `≤ floor + ${row.addMs} ms`,
      row.addRssMiB === undefined ? "" : `RSS ≤ floor + ${row.addRssMiB} MiB`
    ]
      .filter((t) => t !== "")
      .join(", ")
    const ok =
      (row.addMs === undefined || added <= row.addMs) &&
      (row.addRssMiB === undefined || addedRss <= row.addRssMiB * 1048576)
    lines.push(
      `| ${row.label} | ${target} | ${ms(run.map((s) => s.ms))} | ${row.floor} | ${ms(floor.map((s) => s.ms))} | ` +
        `+${added.toFixed(1)} ms | ${rss === 0 ? "" : mib(rss)} | ${rss === 0 ? "" : `+${mib(addedRss)}`} | ` +
        `${target === "" ? "(info)" : ok ? "ok" : "MISS"} |`
    )
  }
  process.stdout.write(lines.join("\n") + "\n")
  process.stdout.write(
    JSON.stringify({ samples, rows: rows.map((row, r) => ({ label: row.label, ...measured[r] })) }) + "\n"
  )
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
