// `npm run bench:effect4`: what an Effect 4 application pays for `@mcp-worker/effect4` against the Effect 3
// packages (`@mcp-worker/node`): start-up (process start to a first open done, the layer's build included), the
// first call, and the per-call time of `callTool` in the host's thread (medians of every call of every round), on
// the stateful fixture. Each round runs both sides in fresh processes, alternating which goes first; each side is
// one esbuild bundle (the Effect 4 face's private implementation is its own file, as the package ships it).
// Needs Node >= 22.19. ROUNDS (default 5) and CALLS (default 300) tune it. Prints a table, then one JSON line.
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as zlib from "node:zlib"
// @ts-expect-error plain ESM build script without types
import { bundleFixtures, bundleOwner } from "../scripts/bundle.mjs"
// @ts-expect-error plain ESM build script without types
import { bundleImplementation } from "../packages/effect4/scripts/bundle.mjs"
// @ts-expect-error plain ESM build script without types
import { effect4Resolution } from "../packages/effect4/scripts/resolution.mjs"
import { median, quantile } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`bench:effect4 needs Node >= 22.19 (this is ${process.versions.node}); see scripts/node-runtimes.sh`)
  process.exit(1)
}
const rounds = Number(process.env.ROUNDS ?? 5)
const calls = Number(process.env.CALLS ?? 300)
const progress = (line: string) => process.stderr.write(`[bench:effect4] ${line}\n`)

interface Run {
  readonly loadedMs: number
  readonly firstOpenMs: number
  readonly firstOpenSinceStartMs: number
  readonly firstOpenCpuMs: number
  readonly firstCallMs: number
  readonly callUs: ReadonlyArray<number>
  readonly cpuUs: number
  readonly rssMb: number
  readonly left: number
}

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  banner: {
    js: 'import { createRequire as __benchCreateRequire } from "node:module"; const require = __benchCreateRequire(import.meta.url);'
  }
} as const

// The baseline finds its owner files where @mcp-worker/node looks for them: ../../owner/ from its own file.
const bundleSides = async (dir: string) => {
  const baseline = path.join(dir, "src/internal/baseline.mjs")
  const face = path.join(dir, "face.mjs")
  fs.mkdirSync(path.dirname(baseline), { recursive: true })
  fs.symlinkSync(path.join(root, "packages/node/owner"), path.join(dir, "owner"))
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: [path.join(here, "effect4-baseline.ts")],
      outfile: baseline,
      plugins: [
        {
          name: "mcp-worker-sources",
          setup(build) {
            build.onResolve({ filter: /^@mcp-worker\/(core|node)(\/.+)?$/ }, (args) => {
              const [, pkg, sub] = /^@mcp-worker\/(core|node)(?:\/(.+))?$/.exec(args.path)!
              return { path: path.join(root, "packages", pkg!, "src", `${sub ?? "index"}.ts`) }
            })
          }
        }
      ]
    }),
    esbuild.build({
      ...common,
      entryPoints: [path.join(here, "effect4/face.ts")],
      outfile: face,
      plugins: [effect4Resolution]
    })
  ])
  return { baseline, face }
}

const runOnce = (entry: string): Run => {
  const fixture = path.join(root, "test/fixtures/dist/stateful.mjs")
  const child = spawnSync(process.execPath, [entry, fixture, String(calls)], { encoding: "utf8" })
  if (child.status !== 0) throw new Error(`${path.basename(entry)} exited ${child.status}: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Run
}

const summary = (runs: ReadonlyArray<Run>) => {
  const pooled = runs.flatMap((run) => run.callUs)
  const perRound = runs.map((run) => median(run.callUs))
  return {
    loadedMs: median(runs.map((run) => run.loadedMs)),
    firstOpenMs: median(runs.map((run) => run.firstOpenMs)),
    firstOpenSinceStartMs: median(runs.map((run) => run.firstOpenSinceStartMs)),
    firstOpenCpuMs: median(runs.map((run) => run.firstOpenCpuMs)),
    firstCallMs: median(runs.map((run) => run.firstCallMs)),
    callMedianUs: median(pooled),
    callP90Us: quantile(pooled, 0.9),
    callRoundMediansUs: [Math.min(...perRound), Math.max(...perRound)],
    cpuPerCallUs: median(runs.map((run) => run.cpuUs)),
    rssMb: median(runs.map((run) => run.rssMb)),
    left: runs.reduce((sum, run) => sum + run.left, 0)
  }
}

progress("bundling the owner, the fixtures, the private implementation and both sides")
await Promise.all([bundleOwner(), bundleFixtures()])
const { host: bytes } = (await bundleImplementation()) as { host: number }
const implementation = path.join(root, "packages/effect4/lib/effect3/implementation.mjs")
const gzipped = zlib.gzipSync(fs.readFileSync(implementation)).length
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-bench-effect4-"))
process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }))
const sides = await bundleSides(dir)

// A first run of each side writes the V8 code cache of its owner runtime; it is not measured.
runOnce(sides.baseline)
runOnce(sides.face)
const results: { effect3: Array<Run>; effect4: Array<Run> } = { effect3: [], effect4: [] }
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (["effect3", "effect4"] as const) : (["effect4", "effect3"] as const)
  for (const side of order) results[side].push(runOnce(side === "effect3" ? sides.baseline : sides.face))
  progress(`round ${round + 1}/${rounds} done`)
}

const effect3 = summary(results.effect3)
const effect4 = summary(results.effect4)
const ms = (x: number) => `${x.toFixed(1)} ms`
const us = (x: number) => `${x.toFixed(0)} µs`
const rows: Array<[string, string, string, string]> = [
  [
    "process start → bundle evaluated",
    ms(effect3.loadedMs),
    ms(effect4.loadedMs),
    ms(effect4.loadedMs - effect3.loadedMs)
  ],
  [
    "layer build + first open",
    ms(effect3.firstOpenMs),
    ms(effect4.firstOpenMs),
    ms(effect4.firstOpenMs - effect3.firstOpenMs)
  ],
  [
    "process start → first open done",
    ms(effect3.firstOpenSinceStartMs),
    ms(effect4.firstOpenSinceStartMs),
    ms(effect4.firstOpenSinceStartMs - effect3.firstOpenSinceStartMs)
  ],
  [
    "process CPU up to the first open",
    ms(effect3.firstOpenCpuMs),
    ms(effect4.firstOpenCpuMs),
    ms(effect4.firstOpenCpuMs - effect3.firstOpenCpuMs)
  ],
  ["first callTool", ms(effect3.firstCallMs), ms(effect4.firstCallMs), ms(effect4.firstCallMs - effect3.firstCallMs)],
  [
    "callTool median",
    us(effect3.callMedianUs),
    us(effect4.callMedianUs),
    us(effect4.callMedianUs - effect3.callMedianUs)
  ],
  [
    "process CPU per callTool",
    us(effect3.cpuPerCallUs),
    us(effect4.cpuPerCallUs),
    us(effect4.cpuPerCallUs - effect3.cpuPerCallUs)
  ],
  ["callTool p90", us(effect3.callP90Us), us(effect4.callP90Us), us(effect4.callP90Us - effect3.callP90Us)],
  [
    "RSS after the calls",
    `${effect3.rssMb.toFixed(0)} MiB`,
    `${effect4.rssMb.toFixed(0)} MiB`,
    `${(effect4.rssMb - effect3.rssMb).toFixed(0)} MiB`
  ]
]
console.log(
  `Node ${process.versions.node}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}; ` +
    `${rounds} rounds × ${calls} calls per side`
)
console.log(
  `private implementation (host, remote): ${(bytes / 1024).toFixed(0)} KiB (${(gzipped / 1024).toFixed(0)} KiB gzipped)\n`
)
console.log("| | Effect 3 packages | Effect 4 face | face − Effect 3 |\n|---|---|---|---|")
for (const row of rows) console.log(`| ${row.join(" | ")} |`)
console.log(
  JSON.stringify({ node: process.versions.node, rounds, calls, implementationBytes: bytes, gzipped, effect3, effect4 })
)
if (effect3.left + effect4.left !== 0) throw new Error("a close left processes behind")
