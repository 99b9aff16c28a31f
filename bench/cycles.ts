// `npm run bench:cycles`: what the library keeps per open → callTool → close cycle, driven the way a host without
// Effect drives it: every operation is its own `ManagedRuntime.runPromise` of one runtime built from
// `NodeMcpWorkers.layer`. After a warm-up, the heap after two full collections must grow by at most 256 bytes per
// cycle, and the threads and file descriptors of the process must be back to their starting counts.
//
//   node --jitless --no-flush-bytecode --import tsx bench/cycles.ts \
//     [--warmup 100] [--cycles 1000] [--every 100] [--style runPromise|fiber]
//
// The npm script runs without V8's compilers: with them, the optimized code and inline-cache feedback of paths
// that run a few times per cycle keep arriving for thousands of cycles (about 1.1 KB per cycle over the first
// 1000, falling from 2.2 KB to 0.5 KB), which would hide a real leak of that size or fake one. Without a JIT and
// with bytecode kept, what is left on the heap is what the program holds. Run it with plain `tsx` to see the
// JIT's share. `--every n` prints the heap every n cycles (a leak is a straight line, warm-up a bending one);
// `--style fiber` runs the same cycles inside one long-lived fiber. Prints one human line (stderr) and one JSON
// line (stdout); exits with 1 when a target is missed.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as v8 from "node:v8"
import * as vm from "node:vm"

const targetBytesPerCycle = 256

const { values } = parseArgs({
  options: {
    warmup: { type: "string", default: "100" },
    cycles: { type: "string", default: "1000" },
    style: { type: "string", default: "runPromise" },
    every: { type: "string", default: "0" }
  }
})
const warmup = Number(values.warmup)
const cycles = Number(values.cycles)
const style = values.style === "fiber" ? "fiber" : "runPromise"
/** Also prints the heap after GC every this many measured cycles (0: never), to tell a plateau from a leak. */
const every = Number(values.every)

const gc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    v8.setFlagsFromString("--expose-gc")
    return vm.runInNewContext("gc") as () => void
  })()

const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/dist/stateful.mjs")
const config = { command: process.execPath, args: [fixture, "--exit-on-stdin-eof"] }

const count = (dir: string) => (process.platform === "linux" ? fs.readdirSync(dir).length : Number.NaN)
const threads = () => count("/proc/self/task")
const fds = () => count("/proc/self/fd")
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Heap after two full collections, once the event loop has let exiting threads and closed handles go. */
const settledHeap = async (): Promise<number> => {
  await delay(200)
  gc()
  await delay(20)
  gc()
  return process.memoryUsage().heapUsed
}

/** Least-squares slope of the heap over the checkpoints, in bytes per cycle. */
const slopeOf = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0)
  return sxy / sxx
}

const jit = !process.execArgv.includes("--jitless")

const spaces = () =>
  Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.space_used_size]))

/** Threads and descriptors of exiting owner threads go away shortly after close: wait for them (at most 5 s). */
const settledCounts = async (want: { threads: number; fds: number }) => {
  for (let i = 0; i < 50 && (threads() > want.threads || fds() > want.fds); i++) await delay(100)
  return { threads: threads(), fds: fds() }
}

const main = async () => {
  const runtime = ManagedRuntime.make(Layer.merge(NodeMcpWorkers.layer, Logger.minimumLogLevel(LogLevel.Warning)))
  const workers = await runtime.runPromise(McpWorkers)

  const cycleEffect = Effect.gen(function* () {
    const id = yield* workers.open(config)
    yield* workers.callTool(id, "echo", { token: "x" })
    yield* workers.close(id)
  })
  const cyclePromise = async () => {
    const id = await runtime.runPromise(workers.open(config))
    await runtime.runPromise(workers.callTool(id, "echo", { token: "x" }))
    await runtime.runPromise(workers.close(id))
  }
  // The fiber style keeps one fiber alive across every cycle; each batch is handed to it as an Effect.
  const runCycles =
    style === "fiber"
      ? (n: number) => runtime.runPromise(Effect.repeatN(cycleEffect, n - 1))
      : async (n: number) => {
          for (let i = 0; i < n; i++) await cyclePromise()
        }

  const started = performance.now()
  await runCycles(warmup)
  const heapBefore = await settledHeap()
  const spacesBefore = spaces()
  const before = { threads: threads(), fds: fds() }
  const curve: Array<[number, number]> = []
  if (every > 0) {
    for (let done = 0; done < cycles;) {
      const n = Math.min(every, cycles - done)
      await runCycles(n)
      done += n
      const heap = await settledHeap()
      curve.push([done, heap])
      process.stderr.write(`  cycle ${done}: heap ${heap} (+${Math.round((heap - heapBefore) / done)} B/cycle)\n`)
    }
  } else {
    await runCycles(cycles)
  }
  const after = await settledCounts(before)
  const heapAfter = await settledHeap()
  const spacesAfter = spaces()
  await runtime.dispose()

  const bytesPerCycle = (heapAfter - heapBefore) / cycles
  // The slope of the checkpoints too: a drop right after the warm-up (garbage of start-up collected late) must
  // not pay for a steady growth later.
  const slope = curve.length >= 2 ? slopeOf(curve) : bytesPerCycle
  const ok =
    bytesPerCycle <= targetBytesPerCycle &&
    slope <= targetBytesPerCycle &&
    after.threads <= before.threads &&
    after.fds <= before.fds
  const result = {
    style,
    warmup,
    cycles,
    heapBefore,
    heapAfter,
    jit,
    bytesPerCycle: Math.round(bytesPerCycle),
    slopeBytesPerCycle: Math.round(slope),
    targetBytesPerCycle,
    // Code space is compiled code only; old space holds what the program retains, and also the JIT's feedback.
    bytesPerCycleBySpace: Object.fromEntries(
      Object.entries(spacesAfter).map(([name, used]) => [name, Math.round((used - (spacesBefore[name] ?? 0)) / cycles)])
    ),
    curve,
    threads: { before: before.threads, after: after.threads },
    fds: { before: before.fds, after: after.fds },
    durationS: Math.round(performance.now() - started) / 1000,
    ok
  }
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(2)
  process.stderr.write(
    `${style}${jit ? "" : " (no JIT)"}, ${cycles} cycles after ${warmup}: heap ${mib(heapBefore)} → ${mib(heapAfter)} MiB, ` +
      `${result.bytesPerCycle} B/cycle, slope ${result.slopeBytesPerCycle} B/cycle (target ≤ ${targetBytesPerCycle}), threads ${before.threads} → ${after.threads}, ` +
      `fds ${before.fds} → ${after.fds}: ${ok ? "ok" : "MISS"}\n`
  )
  process.stdout.write(`${JSON.stringify(result)}\n`)
  if (!ok) process.exitCode = 1
}

await main()
