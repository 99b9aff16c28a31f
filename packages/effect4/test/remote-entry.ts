// A remote worker_thread of the tests: an Effect 4 program over `NodeMcpWorkers.layerRemote`, running the scenario
// named in workerData and posting its plain-data outcome. Bundled by remoteThread.ts.
import * as Effect from "effect/Effect"
import { parentPort, workerData } from "node:worker_threads"
import * as McpWorkerError from "../src/McpWorkerError.js"
import { McpWorkers } from "../src/McpWorkers.js"
import * as NodeMcpWorkers from "../src/NodeMcpWorkers.js"
import { effect4Surface, exerciseBehaviour, withProgress } from "./surface.js"
import { typedScenario, structured } from "./scenarios.js"
import { exerciseTasks } from "./tasksFlow.js"

const input = workerData as { readonly scenario: string; readonly data: Record<string, any> }

const scenarios: Record<string, Effect.Effect<unknown, unknown, McpWorkers>> = {
  behaviour: Effect.gen(function* () {
    const workers = yield* McpWorkers
    const direct = yield* Effect.promise(() => exerciseBehaviour(effect4Surface(workers), input.data.direct))
    const relayed = yield* Effect.promise(() =>
      exerciseBehaviour(withProgress(effect4Surface(workers)), input.data.relayed)
    )
    return { direct, relayed }
  }),
  typed: Effect.suspend(() => typedScenario(input.data.id)),
  // The task flow on a worker of the host, from this thread.
  tasks: Effect.gen(function* () {
    const workers = yield* McpWorkers
    return yield* exerciseTasks(workers, input.data.id, workers.status(input.data.id), input.data.dir)
  }),
  // A worker opened from this thread (the fixture's path comes from the test: this file is bundled elsewhere) belongs to the host; closing it from here confirms its cleanup.
  openAndClose: Effect.gen(function* () {
    const workers = yield* McpWorkers
    const id = yield* workers.open(input.data.config)
    const counted = yield* workers.callTool(id, "inc", { by: 2 })
    const closed = yield* workers.close(id)
    const afterClose = yield* workers.status(id).pipe(
      Effect.as("still known"),
      Effect.catchTag("UnknownWorker", (error) => Effect.succeed(error._tag))
    )
    return { count: structured(counted)?.count, cleanup: closed.cleanup?.activeProcesses, afterClose }
  }),
  // The agent-host operations from a remote thread: the workers belong to the host, errors are this package's.
  agentHost: Effect.gen(function* () {
    const workers = yield* McpWorkers
    const config = input.data.config
    const opened = yield* workers.openAll(
      { servers: { one: config, missing: { ...config, env: { TOKEN: "${env:MCPW_EFFECT4_UNSET}" } } } },
      { environment: {} }
    )
    const one = opened.one!
    const missing = opened.missing!
    const id = one._tag === "Opened" ? one.id : "none"
    const declarations = yield* workers.describe(id)
    const tools = yield* workers.tools(id)
    const echoed = yield* tools.echo!({ token: "remote" })
    const closed = yield* workers.closeAll(opened)
    const closedOne = closed.one!
    return {
      opened: one._tag,
      missing: missing._tag === "Failed" && missing.error instanceof McpWorkerError.InvalidInput,
      declaresEcho: declarations.includes("echo("),
      echoed: structured(echoed)?.token,
      cleanup: closedOne._tag === "Closed" ? closedOne.status.cleanup?.activeProcesses : "failed"
    }
  })
}

const program = scenarios[input.scenario]!.pipe(Effect.provide(NodeMcpWorkers.layerRemote))

void Effect.runPromiseExit(program).then((exit) =>
  parentPort!.postMessage(
    exit._tag === "Success" ? { ok: true, value: exit.value } : { ok: false, error: String(exit.cause) }
  )
)
