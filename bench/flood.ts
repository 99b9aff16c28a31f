// `BENCH_ROWS=flood npm run bench`: one grant holder floods its worker (16 calls at a time, as fast as the host answers,
// busy or not) while another peer's process calls echo on another worker; its median latency against the same calls
// with no flood, in interleaved rounds (target ≤ 2×, C64 and C86). Each peer is its own process, alive for every round.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as McpGrants from "../packages/node/src/McpGrants.js"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import { median, quantile } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const fixture = path.resolve(here, "../test/fixtures/dist/stateful.mjs")
const rounds = 5
const calls = 200

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
// What the host holds alive, collected first: RSS also keeps what the young generation grew to under the flood.
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void
const liveMiB = () => (gc(), (process.memoryUsage().heapUsed + process.memoryUsage().external) / 2 ** 20)
const runtime = ManagedRuntime.make(
  Layer.merge(NodeMcpWorkers.layerListen({ path: socket }), Logger.minimumLogLevel(LogLevel.Warning))
)

/** A peer process driven by lines: `ask` writes one and resolves with the next line it prints. */
const peer = (grant: string, mode: "measure" | "flood") => {
  const child = spawn(process.execPath, [entry, JSON.stringify({ socket, grant, mode })], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const waiting: Array<(line: string) => void> = []
  createInterface({ input: child.stdout! }).on("line", (line) => waiting.shift()?.(line))
  const next = () => new Promise<string>((resolve) => waiting.push(resolve))
  const ask = (line: string) => {
    const answer = next()
    child.stdin!.write(line + "\n")
    return answer
  }
  const exited = new Promise((resolve) => child.once("exit", resolve))
  return { next, ask, end: () => (child.stdin!.end(), exited) }
}

try {
  const [flooded, measured] = await runtime.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const grants = yield* McpGrants.McpGrants
      const config = { command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] }
      return [yield* grants.grant(yield* workers.open(config)), yield* grants.grant(yield* workers.open(config))]
    })
  )
  const measurer = peer(measured!, "measure")
  const flooder = peer(flooded!, "flood")
  await measurer.next()
  const rssBefore = process.memoryUsage().rss
  const rssRounds: Array<number> = []
  const liveBefore = liveMiB()
  const liveRounds: Array<number> = []
  const quiet: Array<number> = []
  const during: Array<number> = []
  const ratios: Array<number> = []
  let requests = 0
  // Interleaved, so that what else the machine runs weighs on both alike.
  for (let round = 0; round < rounds; round++) {
    const q: Array<number> = JSON.parse(await measurer.ask(String(calls)))
    await flooder.ask("start")
    const f: Array<number> = JSON.parse(await measurer.ask(String(calls)))
    rssRounds.push(process.memoryUsage().rss)
    liveRounds.push(liveMiB())
    requests += Number(await flooder.ask("stop"))
    quiet.push(...q)
    during.push(...f)
    ratios.push(median(f) / median(q))
  }
  await Promise.all([measurer.end(), flooder.end()])
  const q = median(quiet)
  const f = median(during)
  const ms = (x: number) => `${x.toFixed(2)} ms`
  process.stdout.write(
    [
      `| measure | target | median | p90 | ratio |`,
      `|---|---|---|---|---|`,
      `| echo on another worker, quiet | | ${ms(q)} | ${ms(quantile(quiet, 0.9))} | 1.00× |`,
      `| echo on another worker, one peer flooding (${requests} requests) | ≤ 2× quiet | ${ms(f)} | ${ms(quantile(during, 0.9))} | ${(f / q).toFixed(2)}× (rounds: ${ratios.map((r) => r.toFixed(2)).join(", ")}) |`,
      `| host RSS, before → during each round's flood | flat | ${[rssBefore, ...rssRounds].map((rss) => (rss / 2 ** 20).toFixed(0)).join(" → ")} MiB | | |`,
      `| host live heap + external, collected, before → during each round's flood | flat | ${[liveBefore, ...liveRounds].map((mib) => mib.toFixed(0)).join(" → ")} MiB | | |`,
      ""
    ].join("\n") + "\n"
  )
} finally {
  await runtime.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
