// `BENCH_ROWS=metrics npm run bench`: host `callTool` (tiny echo) with the host's metrics on (the default, and no
// exporter installed) against the same call on a host with `metrics: false`, in interleaved blocks (target ≤ 1.03×):
// what recording every request costs a caller. Two hosts in one process, one worker each, of the same fixture.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Exit from "effect/Exit"
import { NodeMcpWorkers } from "../packages/node/src/index.js"
import { Observation } from "../packages/node/src/internal/metrics/metrics.js"
import { workerEchoBlock } from "./loops.js"
import { compare, fmtRatio, fmtUs, median, round, table } from "./stats.js"

const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/dist/stateful.mjs")
const config = { command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] }
const blocks = Number(process.env.BENCH_BLOCKS ?? 10)
const perBlock = Number(process.env.BENCH_PER_BLOCK ?? 400)
const quiet = Logger.minimumLogLevel(LogLevel.Warning)

// CPU time this process spent, µs: what other processes on a loaded machine stretch least.
const cpuUs = (): number => {
  const { user, system } = process.cpuUsage()
  return user + system
}

/**
 * The host's own work of recording one request, alone: on a machine too loaded for the call ratio to settle, this
 * bounds it (the call costs the recording plus what it cost before). The median of `rounds` rounds, CPU µs per
 * request.
 */
const recordingCostUs = (rounds = 15, perRound = 50_000): number => {
  const worker = { server: { name: "bench-fixture" } }
  const result = Exit.succeed({ content: [] })
  const costs: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const t0 = cpuUs()
    for (let i = 0; i < perRound; i++) {
      const observation = new Observation(worker, "tools/call", "host", () => {})
      observation.sent()
      observation.resume(result)
    }
    costs.push((cpuUs() - t0) / perRound)
  }
  return costs.sort((a, b) => a - b)[Math.floor(rounds / 2)]!
}

const host = (metrics: boolean) => ManagedRuntime.make(Layer.merge(NodeMcpWorkers.layer({ metrics }), quiet))
const on = host(true)
const off = host(false)

const open = (runtime: ReturnType<typeof host>) =>
  runtime.runPromise(
    Effect.flatMap(McpWorkers, (workers) => Effect.map(workers.open(config), (id) => ({ workers, id })))
  )

try {
  const a = await open(on)
  const b = await open(off)
  const block = (runtime: ReturnType<typeof host>, w: typeof a, tag: string) =>
    runtime.runPromise(workerEchoBlock(w.workers, w.id, perBlock, tag))
  // Warm-up, then blocks in alternating order so that drift favours neither.
  await block(on, a, "w")
  await block(off, b, "w")
  const onBlocks: Array<Array<number>> = []
  const offBlocks: Array<Array<number>> = []
  for (let i = 0; i < blocks; i++) {
    if (i % 2 === 0) {
      onBlocks.push(await block(on, a, `a${i}`))
      offBlocks.push(await block(off, b, `b${i}`))
    } else {
      offBlocks.push(await block(off, b, `b${i}`))
      onBlocks.push(await block(on, a, `a${i}`))
    }
  }
  const c = compare(onBlocks, offBlocks)
  const costUs = recordingCostUs()
  // Adjacent blocks see the same load: the median of their ratios drifts less than the ratio of pooled medians.
  const paired = median(c.blockRatios)
  const bound = (c.direct.median * 1000 + costUs) / (c.direct.median * 1000)
  const verdict = c.ratio <= 1.03 ? "ok" : "MISS"
  process.stdout.write(
    `\n${table(
      ["measure", "target", "metrics on median (p10–p90)", "metrics off median (p10–p90)", "ratio", ""],
      [
        ["callTool echo, host, metrics on vs off", "≤ 1.03×", fmtUs(c.variant), fmtUs(c.direct), fmtRatio(c), verdict],
        ["  median of the blocks' ratios", "", "", "", `${paired.toFixed(3)}×`, "(info)"],
        [
          "  the recording alone, CPU per request",
          "",
          `${costUs.toFixed(2)} µs`,
          "",
          `≤ ${bound.toFixed(3)}× of the off median`,
          "(info)"
        ]
      ]
    )}\n\n`
  )
  process.stdout.write(
    `${JSON.stringify({ metrics: { blocks, perBlock, ratio: round(c.ratio, 4), blockRatios: c.blockRatios.map((r) => round(r, 4)), recordingUs: round(costUs, 3), pairedRatio: round(paired, 4), on: c.variant, off: c.direct } })}\n`
  )
} finally {
  await on.dispose()
  await off.dispose()
}
