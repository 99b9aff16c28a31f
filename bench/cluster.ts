// `npm run bench:cluster`: a call across runners on loopback. Two runner processes of @mcp-worker/cluster on
// 127.0.0.1 (the cluster tests' runner, test/fixtures/dist/cluster-runner.mjs) over a private Postgres; runner A
// opens the stateful fixture, then each runner times sequential `echo` calls in its own process: A's are host calls
// (its own registry), B's cross the runner transport to A's entity and back. Prints one JSON object (stdout).
// Added latency: B's median over A's. Target: ≤ 1 ms median added over a remote-thread call.
// Then the long run (`BENCH_CLUSTER_LONG`, default 100,000; 0 skips it): that many cross-runner calls from B, with
// both runners' memory (RSS and live heap, after full collections) at the start, at each tenth, and once more after
// the runners' records of those calls have lapsed (C89). A runner's memory must stay flat: what it keeps per call is
// the growth of its live heap without V8's compiled code, from the first tenth (caches and pools warm) to after the
// lapse, divided by the calls between.
// Whether it is flat is read from heap snapshots of both runners at the first tenth and after the lapse (objects
// counted by type); `BENCH_CLUSTER_SNAPSHOTS=<dir>` keeps them there, with one at the end.
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { marginMs } from "../packages/cluster/src/internal/requestRecord.js"
import { objectGrowth } from "./heapObjects.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// Plain modules of the test tree, loaded at run time (bench/tsconfig.json does not include test/).
const postgresModule = path.join(root, "test/cluster/postgres.ts")
const { freePort, startPostgres } = (await import(postgresModule)) as {
  freePort: () => Promise<number>
  startPostgres: () => Promise<{ url: string; stop: () => void }>
}

const quantile = (sorted: Array<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const summary = (times: Array<number>) => {
  const sorted = [...times].sort((x, y) => x - y)
  return {
    medianUs: Math.round(quantile(sorted, 0.5) * 1000),
    p10Us: Math.round(quantile(sorted, 0.1) * 1000),
    p90Us: Math.round(quantile(sorted, 0.9) * 1000)
  }
}

const runner = (url: string, port: number) =>
  new Promise<{ call: (op: string, ...args: Array<unknown>) => Promise<any>; stop: () => Promise<void> }>(
    (resolve, reject) => {
      // The runner is a built bundle: it runs without the bench's own TypeScript loader, whose source maps would be
      // read on every error stack the runner builds. V8 drops the bytecode of functions idle for a while, which reads
      // as the runner freeing memory mid-run.
      const child = fork(path.join(root, "test/fixtures/dist/cluster-runner.mjs"), [], {
        execArgv: ["--no-flush-bytecode"],
        cwd: root,
        env: { ...process.env, MCPW_STORAGE: "postgres", MCPW_TARGET: url, MCPW_PORT: String(port) },
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
      children.add(child)
      child.once("exit", () => children.delete(child))
      let next = 0
      const pending = new Map<number, (v: any) => void>()
      const exited = new Promise<void>((done) => child.once("exit", () => done()))
      child.once("exit", () => reject(new Error("runner exited")))
      child.on("message", (m: any) => {
        if (m.ready !== undefined) {
          resolve({
            call: (op, ...args) =>
              new Promise((settle) => {
                const id = next++
                pending.set(id, settle)
                child.send({ id, op, args })
              }),
            stop: async () => {
              child.kill("SIGTERM")
              await exited
            }
          })
          return
        }
        pending.get(m.id)?.(m.exit)
        pending.delete(m.id)
      })
    }
  )

type Runner = Awaited<ReturnType<typeof runner>>

const MiB = 1024 * 1024
// A runner's memory after full collections: RSS, its live heap, and that heap without V8's compiled code, bytecode
// and their metadata (the data: what the runner keeps). Optimized code keeps growing for a while after the first
// tenth of a run, as more functions get hot (heap snapshots: no data object counted with the calls).
const memoryOf = async (r: Runner) => {
  const m = (await r.call("memory")).value as { rss: number; heapUsed: number; code: number }
  return { rssMiB: m.rss / MiB, heapMiB: m.heapUsed / MiB, dataMiB: (m.heapUsed - m.code) / MiB }
}

/** The budget of each bench call: the owner's record keeps a call this long past its stamp, and the margin. */
const callBudgetMs = 10_000
/** How often the cluster forgets the ids its entities answered (the runners' `entityMessagePollInterval`). */
const clusterForgetsEveryMs = 10_000
/**
 * A runner is flat when it keeps fewer JavaScript objects than this per 1,000 calls (heap snapshots after the lapse
 * against the first tenth): keeping anything of each call is at least 1,000. What is built once whatever the calls
 * is a step, not a slope: a few hundred objects, and in some runs ≈ 2,000 more at one point of the run (the caller's
 * runner, either tree; 0.6 MiB). Bytes cannot say it: V8's optimized code, feedback and fixed-size caches grow by
 * ≈ 1 MiB over the first 20,000 calls whatever the runner keeps.
 */
const flatObjectsPer1000Calls = 500

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `calls` cross-runner calls from `b` to the worker `id` of `a`, with both runners' memory along the way. */
const longRun = async (a: Runner, b: Runner, id: string, calls: number) => {
  if (calls === 0) return null
  const steps = 10
  const samples = [{ calls: 0, a: await memoryOf(a), b: await memoryOf(b) }]
  const dir = process.env.BENCH_CLUSTER_SNAPSHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-heap-"))
  const fileOf = (runner: "owner" | "caller", at: string) => path.join(dir, `${runner}-${at}.heapsnapshot`)
  const snapshot = async (at: string) => {
    await a.call("heapSnapshot", fileOf("owner", at))
    await b.call("heapSnapshot", fileOf("caller", at))
  }
  for (let step = 1; step <= steps; step++) {
    const done = Math.round((calls * step) / steps)
    const exit = await b.call("bench", id, done - samples[samples.length - 1]!.calls, callBudgetMs)
    if (!exit.ok) throw new Error(JSON.stringify(exit))
    samples.push({ calls: done, a: await memoryOf(a), b: await memoryOf(b) })
    if (step === 1) await snapshot("warm")
    progress(`long run: ${done} calls`)
  }
  if (process.env.BENCH_CLUSTER_SNAPSHOTS !== undefined) await snapshot("end")
  // Every call's record has lapsed (its stamp, budget and margin passed, and the cluster's poll forgot its id); one
  // more call lets the owner's record sweep (it sweeps as messages arrive).
  progress("long run: waiting for the records of its calls to lapse")
  await sleep(callBudgetMs + marginMs + clusterForgetsEveryMs + 1_000)
  await b.call("bench", id, 1, callBudgetMs)
  const lapsed = { calls, a: await memoryOf(a), b: await memoryOf(b) }
  await snapshot("lapsed")
  // Growth per call from the first tenth on: the first tenth also warms caches and pools that stop growing.
  const warm = samples[1]!
  const end = samples[samples.length - 1]!
  const perCall = (to: (typeof samples)[number], pick: (s: (typeof samples)[number]) => number) =>
    Math.round((((pick(to) - pick(warm)) * MiB) / (end.calls - warm.calls)) * 10) / 10
  const mib = (x: number) => Math.round(x * 100) / 100
  const memoryRow = (
    runner: "owner" | "caller",
    pick: (s: (typeof samples)[number]) => Awaited<ReturnType<typeof memoryOf>>
  ) => {
    const kept = objectGrowth(fileOf(runner, "warm"), fileOf(runner, "lapsed"))
    const keptObjectsPer1000Calls = Math.round((kept.total * 1000) / (end.calls - warm.calls))
    return {
      // live heap without code (MiB) at the first tenth, at the end, and once the run's records lapsed
      dataMiB: { warm: mib(pick(warm).dataMiB), end: mib(pick(end).dataMiB), lapsed: mib(pick(lapsed).dataMiB) },
      // its growth per call, first tenth to end: what the run holds, the records of its last calls included
      dataBytesPerCall: perCall(end, (s) => pick(s).dataMiB),
      // the same, to after the records lapsed: what the runner keeps of the calls it served, and V8's noise
      keptBytesPerCall: perCall(lapsed, (s) => pick(s).dataMiB),
      // the whole live heap's growth per call, first tenth to end (code included); RSS is in the samples (writing
      // the first snapshot moves it)
      heapBytesPerCall: perCall(end, (s) => pick(s).heapMiB),
      // JavaScript objects more after the lapse than at the first tenth, per 1,000 calls, and by type
      keptObjectsPer1000Calls,
      keptObjects: kept.byType,
      flat: keptObjectsPer1000Calls < flatObjectsPer1000Calls
    }
  }
  const result = {
    calls,
    // calls done: owner runner (A) and caller runner (B), RSS / live heap / live heap without code, in MiB
    samples: [...samples, lapsed].map(
      (s, i) =>
        `${i > steps ? "lapsed" : s.calls}: A ${mib(s.a.rssMiB)} / ${mib(s.a.heapMiB)} / ${mib(s.a.dataMiB)}, ` +
        `B ${mib(s.b.rssMiB)} / ${mib(s.b.heapMiB)} / ${mib(s.b.dataMiB)}`
    ),
    ownerRunner: memoryRow("owner", (s) => s.a),
    callerRunner: memoryRow("caller", (s) => s.b)
  }
  if (process.env.BENCH_CLUSTER_SNAPSHOTS === undefined) fs.rmSync(dir, { recursive: true, force: true })
  return result
}

// Interrupted (Ctrl-C, a kill), the bench still stops its runners and its database.
const children = new Set<ChildProcess>()
let stopDatabase: (() => void) | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill("SIGKILL")
    stopDatabase?.()
    process.exit(signal === "SIGINT" ? 130 : 143)
  })
}

const n = Number(process.env.BENCH_CLUSTER_CALLS ?? 1000)
const progress = (line: string) => process.stderr.write(`[bench:cluster] ${line}\n`)
const pg = await startPostgres()
stopDatabase = pg.stop
try {
  const [a, b] = await Promise.all([runner(pg.url, await freePort()), runner(pg.url, await freePort())])
  try {
    const opened = await a.call("open", {
      command: process.execPath,
      args: [path.join(root, "test/fixtures/dist/stateful.mjs"), "--exit-on-stdin-eof"]
    })
    if (!opened.ok) throw new Error(JSON.stringify(opened))
    const id = opened.value as string
    // warm both paths (JIT, the runner connection, the entity)
    await a.call("bench", id, 200)
    await b.call("bench", id, 200)
    const blocks = { host: [] as Array<number>, cluster: [] as Array<number> }
    for (let i = 0; i < 4; i++) {
      progress(`block ${i + 1}/4`)
      blocks.host.push(...(await a.call("bench", id, n / 4)).value)
      blocks.cluster.push(...(await b.call("bench", id, n / 4)).value)
    }
    const host = summary(blocks.host)
    const cluster = summary(blocks.cluster)
    const result = {
      calls: n,
      hostCall: host,
      crossRunnerCall: cluster,
      addedMedianUs: cluster.medianUs - host.medianUs
    }
    const long = await longRun(a, b, id, Number(process.env.BENCH_CLUSTER_LONG ?? 100_000))
    process.stdout.write(`${JSON.stringify({ ...result, long }, null, 2)}\n`)
    await a.call("close", id)
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
} finally {
  stopDatabase = undefined
  pg.stop()
}
