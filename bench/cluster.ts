// `npm run bench:cluster`: a call across runners on loopback. Two runner processes of @mcp-worker/cluster on
// 127.0.0.1 (the cluster tests' runner, test/fixtures/dist/cluster-runner.mjs) over a private Postgres; runner A
// opens the stateful fixture, then each runner times sequential `echo` calls in its own process: A's are host calls
// (its own registry), B's cross the runner transport to A's entity and back. Prints one JSON object (stdout).
// Added latency: B's median over A's. Target: ≤ 1 ms median added over a remote-thread call.
// Then the long run (`BENCH_CLUSTER_LONG`, default 100,000; 0 skips it): that many cross-runner calls from B, with
// both runners' memory (RSS and live heap, after full collections) before, at each tenth, and after. A runner's
// memory must stay flat: what grows per call is the growth over the run divided by its calls.
import { fork } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

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
      // read on every error stack the runner builds.
      const child = fork(path.join(root, "test/fixtures/dist/cluster-runner.mjs"), [], {
        execArgv: [],
        cwd: root,
        env: { ...process.env, MCPW_STORAGE: "postgres", MCPW_TARGET: url, MCPW_PORT: String(port) },
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
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
const memoryOf = async (r: Runner) => {
  const m = (await r.call("memory")).value as { rss: number; heapUsed: number }
  return { rssMiB: m.rss / MiB, heapMiB: m.heapUsed / MiB }
}

/** `calls` cross-runner calls from `b` to the worker `id` of `a`, with both runners' memory along the way. */
const longRun = async (a: Runner, b: Runner, id: string, calls: number) => {
  if (calls === 0) return null
  const steps = 10
  const samples = [{ calls: 0, a: await memoryOf(a), b: await memoryOf(b) }]
  for (let step = 1; step <= steps; step++) {
    const done = Math.round((calls * step) / steps)
    const exit = await b.call("bench", id, done - samples[samples.length - 1]!.calls)
    if (!exit.ok) throw new Error(JSON.stringify(exit))
    samples.push({ calls: done, a: await memoryOf(a), b: await memoryOf(b) })
    progress(`long run: ${done} calls`)
  }
  // Growth per call from the second sample on: the first tenth also warms caches and pools that stop growing.
  const from = samples[1]!
  const to = samples[samples.length - 1]!
  const perCall = (pick: (s: (typeof samples)[number]) => number) =>
    Math.round(((pick(to) - pick(from)) * MiB) / (to.calls - from.calls))
  const mib = (x: number) => Math.round(x * 10) / 10
  return {
    calls,
    // calls done: owner runner (A) and caller runner (B), RSS / live heap in MiB
    samples: samples.map(
      (s) => `${s.calls}: A ${mib(s.a.rssMiB)} / ${mib(s.a.heapMiB)}, B ${mib(s.b.rssMiB)} / ${mib(s.b.heapMiB)}`
    ),
    ownerRunnerHeapBytesPerCall: perCall((s) => s.a.heapMiB),
    ownerRunnerRssBytesPerCall: perCall((s) => s.a.rssMiB),
    callerRunnerHeapBytesPerCall: perCall((s) => s.b.heapMiB),
    callerRunnerRssBytesPerCall: perCall((s) => s.b.rssMiB)
  }
}

const n = Number(process.env.BENCH_CLUSTER_CALLS ?? 1000)
const progress = (line: string) => process.stderr.write(`[bench:cluster] ${line}\n`)
const pg = await startPostgres()
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
  pg.stop()
}
