// `BENCH_ROWS=flood npm run bench`: one grant holder floods its worker (16 calls at a time, as fast as the host answers,
// busy or not) while another peer's process calls echo on another worker; its median latency against the same calls
// with no flood (target ≤ 2×, C64 bounds what the flooder has waiting in the host). Each peer is its own process.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as McpGrants from "../packages/node/src/McpGrants.js"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import { median, quantile } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const fixture = path.resolve(here, "../test/fixtures/dist/stateful.mjs")
const calls = 1_000

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-flood-"))
fs.chmodSync(dir, 0o700)
const entry = path.join(dir, "floodEntry.mjs")
await esbuild.build({
  entryPoints: [path.join(here, "floodEntry.ts")],
  outfile: entry,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  tsconfig: path.join(here, "../tsconfig.json"),
  banner: {
    js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
  },
  logLevel: "warning"
})

const socket = path.join(dir, "host.sock")
const runtime = ManagedRuntime.make(
  Layer.merge(NodeMcpWorkers.layerListen({ path: socket }), Logger.minimumLogLevel(LogLevel.Warning))
)
const measure = (grant: string) =>
  new Promise<Array<number>>((resolve, reject) =>
    execFile(
      process.execPath,
      [entry, JSON.stringify({ socket, grant, mode: "measure", calls })],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout)))
    )
  )
try {
  const [flooded, measured] = await runtime.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const grants = yield* McpGrants.McpGrants
      const config = { command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] }
      return [yield* grants.grant(yield* workers.open(config)), yield* grants.grant(yield* workers.open(config))]
    })
  )
  const rssBefore = process.memoryUsage().rss
  const quiet = await measure(measured!)
  const flooder = spawn(process.execPath, [entry, JSON.stringify({ socket, grant: flooded, mode: "flood", calls })], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const lines = createInterface({ input: flooder.stdout! })
  const made = new Promise<string>((resolve) => lines.on("line", (line) => line !== "FLOODING" && resolve(line)))
  await new Promise<void>((resolve) => lines.on("line", (line) => line === "FLOODING" && resolve()))
  const during = await measure(measured!)
  const rssDuring = process.memoryUsage().rss
  flooder.stdin!.end()
  const requests = await made
  const q = median(quiet)
  const f = median(during)
  const ms = (x: number) => `${x.toFixed(2)} ms`
  process.stdout.write(
    [
      `| measure | target | median | p90 | ratio |`,
      `|---|---|---|---|---|`,
      `| echo on another worker, quiet | | ${ms(q)} | ${ms(quantile(quiet, 0.9))} | 1.00× |`,
      `| echo on another worker, one peer flooding (${requests} requests) | ≤ 2× quiet | ${ms(f)} | ${ms(quantile(during, 0.9))} | ${(f / q).toFixed(2)}× |`,
      `| host RSS, before → during the flood | flat | ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssDuring / 2 ** 20).toFixed(0)} MiB | | |`,
      ""
    ].join("\n") + "\n"
  )
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
