// One fresh process of `bench/effect4.ts`: the Effect 4 face (`@mcp-worker/effect4`) hosts a worker of the stateful
// fixture, and reports its start-up and per-call times as one JSON line. Its twin on the Effect 3 packages is
// bench/effect4-baseline.ts; both do the same steps.
import { McpWorkers } from "@mcp-worker/effect4/McpWorkers"
import * as NodeMcpWorkers from "@mcp-worker/effect4/NodeMcpWorkers"
import * as Effect from "effect/Effect"

// Node's start, this bundle's load and evaluation: up to here.
const loaded = performance.now()
const [fixture, count] = process.argv.slice(2)
const calls = Number(count ?? 300)

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const id = yield* workers.open({ command: process.execPath, args: [fixture!, "--exit-on-stdin-eof"] })
  const opened = performance.now()
  const openCpu = process.cpuUsage()
  yield* workers.callTool(id, "echo", { token: "first" })
  const firstCall = performance.now() - opened
  const samples: Array<number> = []
  // CPU time of this process (every thread of it: the host's, the owner's) per call, which other load on the
  // machine does not inflate as it does wall time.
  const cpu = process.cpuUsage()
  for (let i = 0; i < calls; i++) {
    const started = performance.now()
    yield* workers.callTool(id, "echo", { token: "call" })
    samples.push((performance.now() - started) * 1000)
  }
  const used = process.cpuUsage(cpu)
  const cpuUs = (used.user + used.system) / calls
  const rssMb = process.memoryUsage().rss / 1024 / 1024
  const closed = yield* workers.close(id)
  return {
    opened,
    openCpuMs: (openCpu.user + openCpu.system) / 1000,
    firstCall,
    samples,
    cpuUs,
    rssMb,
    left: closed.cleanup?.activeProcesses
  }
})

// The layer's build (the private runtime's load included) is part of the first open.
const started = performance.now()
const result = await Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layer())))
process.stdout.write(
  JSON.stringify({
    loadedMs: loaded,
    firstOpenMs: result.opened - started,
    firstOpenSinceStartMs: result.opened,
    firstOpenCpuMs: result.openCpuMs,
    firstCallMs: result.firstCall,
    callUs: result.samples,
    cpuUs: result.cpuUs,
    rssMb: result.rssMb,
    left: result.left
  }) + "\n"
)
