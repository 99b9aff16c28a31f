// One runner process of the cluster tests, driven by its parent over IPC. Run from the repo root:
//   node --import tsx test/cluster/runner-program.ts
// Environment: MCPW_STORAGE (postgres | sqlite), MCPW_TARGET (the url or file), MCPW_PORT (where the other runners
// reach it), MCPW_LISTEN_PORT (where it listens, when a proxy stands in front of it), MCPW_DEFECT=1 (its registry's
// callTool of the tool "defect" dies, counted on stdout as `DEFECT <n>`), MCPW_EXPIRATION (runnerExpiration, s),
// MCPW_REQUEST_TIMEOUT (requestTimeout, s: the budget of a status or cancel to another runner).
// Messages in: { id, op, args }; out: { id, exit: { ok: true, value } | { ok: false, error } } and, once,
// { ready: { group, address, pid } }. Errors travel as their fields and `_tag`.
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { context as otelContext, propagation, ROOT_CONTEXT } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { McpWorkers } from "../../packages/core/src/McpWorkers.js"
import type * as McpWorkersModule from "../../packages/core/src/McpWorkers.js"
import { McpCluster } from "../../packages/cluster/src/index.js"
import { layerWith } from "../../packages/cluster/src/internal/cluster.js"
import { LocalWorkers } from "../../packages/cluster/src/internal/facade.js"
import * as NodeMcpWorkers from "../../packages/node/src/NodeMcpWorkers.js"
import { abortThenCall } from "../node/abortSuite.js"
import { effectSurface } from "../node/behaviourSuite.js"
import { refusals } from "../node/prepareSuite.js"
import { type RecordedSpan, recordingTracer } from "../node/recordingTracer.js"
import { type StorageKind, sqlLayer } from "./storage.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const port = Number(env("MCPW_PORT"))
const listenPort = process.env.MCPW_LISTEN_PORT === undefined ? undefined : Number(process.env.MCPW_LISTEN_PORT)

// This runner's own registry; with MCPW_DEFECT=1 its callTool of "defect" dies, as a broken handler would, and
// says so on stdout each time, so that the test can count how often the request ran.
let defects = 0
const withDefect = (workers: McpWorkersModule.McpWorkersService): McpWorkersModule.McpWorkersService =>
  process.env.MCPW_DEFECT !== "1"
    ? workers
    : {
        ...workers,
        callTool: (...args: Array<unknown>) =>
          args[1] === "defect"
            ? Effect.suspend(() => {
                defects++
                process.stdout.write(`DEFECT ${defects}\n`)
                return Effect.die(new Error("the handler broke"))
              })
            : (workers.callTool as (...args: Array<unknown>) => Effect.Effect<any, any>)(...args)
      }

const cluster = layerWith(
  {
    runner: { host: "127.0.0.1", port, listenPort },
    runnerExpiration: Duration.seconds(Number(process.env.MCPW_EXPIRATION ?? 20)),
    requestTimeout: Duration.seconds(Number(process.env.MCPW_REQUEST_TIMEOUT ?? 30)),
    refreshInterval: Duration.millis(500)
  },
  Layer.scoped(LocalWorkers, Effect.map(NodeMcpWorkers.make(), withDefect))
).pipe(Layer.provide(sqlLayer(env("MCPW_STORAGE") as StorageKind, env("MCPW_TARGET"))))

type Msg = { id: number; op: string; args: Array<any> }

// `gc` without a command-line flag, for the memory op only: a V8 flag set at start would make owners refuse the
// build's code cache.
let gc: (() => void) | undefined
const collect = (): void => {
  if (gc === undefined) {
    v8.setFlagsFromString("--expose-gc")
    gc = vm.runInNewContext("gc") as () => void
  }
  gc()
}

const encodeError = (error: unknown) =>
  typeof error === "object" && error !== null
    ? { ...error, message: (error as Error).message }
    : { defect: String(error) }

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const self = yield* McpCluster.McpCluster
  const runtime = yield* Effect.runtime<never>()
  const fibers = new Map<number, Fiber.RuntimeFiber<unknown, unknown>>()
  const run = (op: string, args: Array<any>): Effect.Effect<unknown, unknown> => {
    const w = workers as any
    switch (op) {
      case "open":
        return w.open(args[0], args[1])
      case "request": {
        const [name, id, rest, options] = args
        const { onProgress, timeoutMs, ...other } = options ?? {}
        // `onProgress: "report"`: the progress this caller was given comes back with the result
        const progress: Array<unknown> = []
        const withProgress =
          onProgress === "report" ? { ...other, onProgress: (p: unknown) => progress.push(p) } : other
        const call = w[name](
          id,
          ...rest,
          timeoutMs === undefined ? withProgress : { ...withProgress, timeout: Duration.millis(timeoutMs) }
        ) as Effect.Effect<unknown, unknown>
        return onProgress === "report" ? Effect.map(call, (result) => ({ result, progress })) : call
      }
      case "traced": {
        // an echo inside a span of this runner, `off`: with tracing turned off, or `baggage`: inside an incoming span
        // whose context has a trace state and with baggage; the span's ids come back with its result
        const [id, mode] = args as [string, "on" | "off" | "baggage" | undefined]
        const call = Effect.withSpan(
          Effect.flatMap(Effect.currentSpan, (span) =>
            Effect.as(w.callTool(id, "echo", { token: `traced-${mode ?? "on"}` }) as Effect.Effect<unknown, unknown>, {
              traceId: span.traceId,
              spanId: span.spanId
            })
          ),
          "test.caller"
        )
        if (mode === "off") return Effect.withTracerEnabled(call, false)
        if (mode !== "baggage") return call
        const [incoming, baggage] = args.slice(2) as [
          { traceId: string; spanId: string; traceState: string },
          Record<string, string>
        ]
        return call.pipe(
          Effect.withParentSpan(OtelTracer.makeExternalSpan({ ...incoming, traceFlags: 1 })),
          withOtelBaggage(baggage)
        )
      }
      case "spans":
        // the spans this runner's tracer recorded so far
        return Effect.succeed(spans)
      case "status":
        return w.status(args[0])
      case "cancel":
        return w.cancel(args[0], args[1])
      case "close":
        return w.close(args[0], args[1])
      case "events": {
        // the first `n` notifications of the worker from now on (fewer if its stream ends), within `ms`
        const [id, n, ms] = args
        return (w.events(id) as Stream.Stream<unknown, unknown>).pipe(
          Stream.take(n),
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.timeout(Duration.millis(ms))
        )
      }
      case "bench": {
        // `n` sequential echo calls from this process, each timed here, each with a budget of `budgetMs`
        // (bench/cluster.ts)
        const [id, n, budgetMs = 10_000] = args
        return Effect.gen(function* () {
          const times: Array<number> = []
          for (let i = 0; i < n; i++) {
            const start = performance.now()
            yield* w.callTool(id, "echo", { token: `b${i}` }, { timeout: Duration.millis(budgetMs) }) as Effect.Effect<
              unknown,
              unknown
            >
            times.push(performance.now() - start)
          }
          return times
        })
      }
      case "memory": {
        // this process's memory after two full collections, in bytes, and how much of its heap is V8's compiled
        // code and bytecode with their metadata (bench/cluster.ts)
        return Effect.sync(() => {
          collect()
          collect()
          const { rss, heapUsed } = process.memoryUsage()
          const code = v8.getHeapCodeStatistics()
          return { rss, heapUsed, code: code.code_and_metadata_size + code.bytecode_and_metadata_size }
        })
      }
      case "heapSnapshot": {
        // this process's heap after two full collections, written to the file `args[0]` (bench/cluster.ts)
        return Effect.sync(() => {
          collect()
          collect()
          return v8.writeHeapSnapshot(args[0])
        })
      }
      case "abortThenCall": {
        // the abort suite from this process: `n` rounds of a call interrupted after 0 to 7 ms, then a call at once
        const [id, n] = args
        return Effect.promise(() => abortThenCall(effectSurface(w), id, n, { at: "delay", ms: (round) => round % 8 }))
      }
      case "refusals": {
        // bad inputs (prepareSuite.ts) to the worker `id`, each refusal as plain data
        const [id, inputs] = args
        return Effect.promise(() =>
          refusals(inputs, (name, callArgs, options) =>
            Effect.runPromiseExit(w.callTool(id, name, callArgs, options) as Effect.Effect<unknown, unknown>).then(
              (exit) => (Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause)))
            )
          )
        )
      }
      default:
        return Effect.die(`unknown op ${op}`)
    }
  }
  process.on("message", (raw: unknown) => {
    const msg = raw as Msg
    if (msg.op === "interrupt") {
      const fiber = fibers.get(msg.args[0])
      if (fiber !== undefined) Runtime.runFork(runtime)(Fiber.interrupt(fiber))
      return
    }
    const fiber = Runtime.runFork(runtime)(run(msg.op, msg.args))
    fibers.set(msg.id, fiber)
    fiber.addObserver((exit) => {
      fibers.delete(msg.id)
      const reply = Exit.isSuccess(exit)
        ? { ok: true, value: exit.value }
        : exit.cause._tag === "Fail"
          ? { ok: false, error: encodeError(exit.cause.error) }
          : {
              ok: false,
              error: { _tag: Cause.isInterruptedOnly(exit.cause) ? "Interrupted" : "Defect", cause: String(exit.cause) }
            }
      process.send?.({ id: msg.id, exit: reply })
    })
  })
  // The parent gone (the test ended or died): end as a runner ends, finalizers included.
  process.on("disconnect", () => process.kill(process.pid, "SIGTERM"))
  process.send?.({ ready: { group: self.group, address: self.address, pid: process.pid } })
  yield* Effect.never
})

// MCPW_TRACE=1: the whole runner traces (a tracer with W3C ids), so a call's trace crosses runners into the server.
const spans: Array<RecordedSpan> = []
if (process.env.MCPW_TRACE === "1") otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())

// Runs `effect` with `entries` as the baggage of the active OpenTelemetry context.
const withOtelBaggage =
  (entries: Record<string, string>) =>
  <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(Effect.runtime<never>(), (runtime) => {
      const baggage = propagation.createBaggage(
        Object.fromEntries(Object.entries(entries).map(([key, value]) => [key, { value }]))
      )
      const context = propagation.setBaggage(ROOT_CONTEXT, baggage)
      return Effect.flatten(
        Effect.promise(() => otelContext.with(context, () => Runtime.runPromiseExit(runtime)(effect)))
      )
    })
const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  process.env.MCPW_TRACE === "1"
    ? Effect.withTracer(
        effect,
        recordingTracer("runner", (span) => spans.push(span))
      )
    : effect

program.pipe(
  Effect.provide(cluster),
  Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)),
  traced,
  NodeRuntime.runMain
)
