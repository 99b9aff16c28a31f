// The entry of the remote threads of the cross-thread tests (bundled by remoteThread.ts: vitest's TypeScript
// transform does not reach worker_threads). `workerData` names a scenario and its data; the thread reports events
// and its outcome to the test on `parentPort`, errors encoded with their Schema so they arrive as the same classes.
// Nothing here keeps the thread alive: once its scenario is done, the thread must exit on its own.
import type * as JsonValue from "@mcp-worker/core/JsonValue"
import { McpWorkerError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { McpWorkers, type OpenOptions as McpWorkersOpenOptions } from "@mcp-worker/core/McpWorkers"
import type { SavedResult } from "@mcp-worker/core/Operations"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import type { ServerConfigInput, StdioConfigInput } from "@mcp-worker/core/ServerConfig"
import * as ToolBinding from "@mcp-worker/core/agentHost/ToolBinding"
import * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import { makePromiseClient, type PromiseClient } from "@mcp-worker/node/PromiseClient"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import * as Context from "effect/Context"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { parentPort, workerData } from "node:worker_threads"
import { abortThenCall } from "./abortSuite.js"
import { type Input, refusals } from "./prepareSuite.js"
import { effectSurface, exerciseBehaviour, withProgress } from "./behaviourSuite.js"
import { effectIdleSurface, exerciseIdle } from "./idleSuite.js"
import { exerciseEverything } from "./everythingSuite.js"
import { exerciseTasks } from "./tasksSuite.js"
import { exerciseTasks26 } from "./tasks26Suite.js"
import { withPromiseClient } from "./helpers.js"
import { type RecordedSpan, recordingTracer } from "./recordingTracer.js"
import { exerciseSignal } from "./signalSuite.js"
import {
  exercise,
  exerciseCountsAfterAnswer,
  exerciseEvents,
  exerciseProgress,
  exerciseSubscribeThenBusy
} from "./operationsSuite.js"
import {
  effectFilterSurface,
  exerciseFilter,
  type FilterSurface,
  openRefusal,
  relayedFilter,
  run as runEffect
} from "./toolFilterSuite.js"

/** What the test sends to a thread. A `host` scenario runs `NodeMcpWorkers.layer()`, the others `layerRemote`. */
export interface ThreadInput {
  readonly scenario: ScenarioName
  readonly data: Record<string, any>
}

/** The scenarios a remote thread can run. */
export type ScenarioName =
  | "inc"
  | "sequence"
  | "open"
  | "close"
  | "race"
  | "interrupt"
  | "hang"
  | "stall"
  | "timedCall"
  | "coldCall"
  | "noHost"
  | "holdAcrossHostClose"
  | "envFrom"
  | "errorClasses"
  | "promiseClient"
  | "operations"
  | "events"
  | "countsAfterAnswer"
  | "subscribeThenBusy"
  | "signal"
  | "everything"
  | "tasks"
  | "tasks26"
  | "agentHost"
  | "behaviour"
  | "ask"
  | "saveTo"
  | "spill"
  | "host"
  | "whileHostBlocked"
  | "traced"
  | "tracedState"
  | "spanned"
  | "idle"
  | "calls"
  | "toolFilter"
  | "paramHeaders"
  | "abortThenCall"
  | "refusals"

type Scenario = (data: any) => Effect.Effect<unknown, unknown, McpWorkers>

/** What a thread sends to the test. */
export type ThreadMessage =
  | { readonly _tag: "Event"; readonly name: string; readonly value?: unknown }
  | { readonly _tag: "Done"; readonly value: unknown }
  | { readonly _tag: "Failed"; readonly error: unknown; readonly tagged: boolean }

const port = parentPort!
const emit = (name: string, value?: unknown) => port.postMessage({ _tag: "Event", name, value })

/** Waits for the test to post `name` to this thread. */
const waitFor = (name: string) =>
  Effect.async<void>((resume) => {
    const onMessage = (message: unknown) => {
      if (message !== name) return
      port.off("message", onMessage)
      resume(Effect.void)
    }
    port.on("message", onMessage)
    return Effect.sync(() => port.off("message", onMessage))
  })

const structured = (result: { structuredContent?: unknown }) => result.structuredContent as Record<string, any>

/** An error as plain data the test can check: its tag, its message, and its encoded form (decoded there). */
const describe = (error: unknown): { _tag: string; message: string; encoded: unknown } =>
  Schema.is(McpWorkerError)(error)
    ? { _tag: error._tag, message: error.message, encoded: Schema.encodeSync(McpWorkerError)(error) }
    : { _tag: "other", message: String(error), encoded: null }

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    return { exit, ms: Date.now() - started }
  })

interface CallData {
  readonly id: string
  readonly token: string
  readonly ms: number
  readonly timeout: number
}

/** Waits for "go", then calls `sleep` of `ms` with the budget `timeout`, timed; `warm` asks the host first. */
const callAfterGo = (data: CallData, warm: boolean) =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    if (warm) yield* workers.status(data.id)
    emit("ready")
    yield* waitFor("go")
    const { exit, ms } = yield* timed(
      workers.callTool(data.id, "sleep", { ms: data.ms, token: data.token }, { timeout: data.timeout })
    )
    return {
      ms,
      result: exit._tag === "Success" ? structured(exit.value) : null,
      error: exit._tag === "Failure" && exit.cause._tag === "Fail" ? describe(exit.cause.error) : null
    }
  })

const scenarios: Record<ScenarioName, Scenario> = {
  /**
   * Two echo calls without a tracer (relayed by the host, which gives the route, then straight to the owner thread),
   * then two by a second client of this thread with a recording tracer (relayed, then direct): that client's spans.
   */
  traced: (data: { id: string }) =>
    Effect.scoped(
      Effect.gen(function* () {
        const untraced = yield* McpWorkers
        yield* untraced.callTool(data.id, "echo", { token: "u1" })
        yield* untraced.callTool(data.id, "echo", { token: "u2" })
        const spans: Array<RecordedSpan> = []
        const traced = Context.get(yield* Layer.build(NodeMcpWorkers.layerRemote), McpWorkers)
        const tracer = recordingTracer("remote", (span) => spans.push(span))
        yield* Effect.withTracer(traced.callTool(data.id, "echo", { token: "t1" }), tracer)
        yield* Effect.withTracer(traced.callTool(data.id, "echo", { token: "t2" }), tracer)
        return spans
      })
    ),

  /**
   * Two calls by a fresh client of this thread with a recording tracer (relayed, then direct), inside a span of another
   * process whose OpenTelemetry span context has a trace state (`@effect/opentelemetry`'s external span): their spans.
   */
  tracedState: (data: { id: string; traceId: string; spanId: string; traceState: string }) =>
    Effect.scoped(
      Effect.gen(function* () {
        const spans: Array<RecordedSpan> = []
        const traced = Context.get(yield* Layer.build(NodeMcpWorkers.layerRemote), McpWorkers)
        const tracer = recordingTracer("remote", (span) => spans.push(span))
        const incoming = OtelTracer.makeExternalSpan({ ...data, traceFlags: 1 })
        for (const token of ["s1", "s2"]) {
          yield* traced
            .callTool(data.id, "echo", { token })
            .pipe(Effect.withParentSpan(incoming), Effect.withTracer(tracer))
        }
        return spans
      })
    ),

  /**
   * C121 from this thread: the idle suite through layerRemote and the Promise client (straight to the owner thread,
   * but a call with a progress callback, which the host relays).
   */
  idle: (data: { effect: string; promise: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      yield* workers.ping(data.effect)
      // Two workers, one run each: the runs go at once.
      return yield* Effect.all(
        {
          effect: Effect.promise(() => exerciseIdle(effectIdleSurface(workers.callTool), data.effect)),
          promise: withPromiseClient(async (mcp) => {
            await mcp.ping(data.promise)
            return exerciseIdle(mcp, data.promise)
          })
        },
        { concurrency: "unbounded" }
      )
    }),

  /**
   * A call outside any span (relayed by the host, which gives the route), then one inside a span of Effect's default
   * tracer (straight to the owner thread): that span's ids (C83).
   */
  spanned: (data: { id: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      yield* workers.callTool(data.id, "echo", { token: "u" })
      const span = yield* Effect.currentSpan.pipe(
        Effect.tap(() => workers.callTool(data.id, "echo", { token: "d" })),
        Effect.withSpan("test.spanned")
      )
      // Outside any span again, with the route known: straight to the owner, unless the host traces (C83).
      yield* workers.callTool(data.id, "echo", { token: "u2" })
      return { traceId: span.traceId, spanId: span.spanId }
    }),

  /**
   * One call (relayed by the host, which gives this thread the worker's route), then, on "go", 20 more: when each
   * ended (the test blocks the host thread meanwhile).
   */
  whileHostBlocked: (data: { id: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      yield* workers.callTool(data.id, "echo", { token: "route" })
      emit("ready")
      yield* waitFor("go")
      const tokens: Array<unknown> = []
      for (let i = 0; i < 20; i++) {
        tokens.push(structured(yield* workers.callTool(data.id, "echo", { token: `t${i}` })).token)
      }
      return { tokens, doneAt: Date.now() }
    }),

  /** Calls `inc` and `info` on an existing worker. */
  inc: (data: { id: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const count = structured(yield* workers.callTool(data.id, "inc")).count as number
      const pid = structured(yield* workers.callTool(data.id, "info")).pid as number
      return { count, pid }
    }),

  /**
   * `n` echo calls in a row, each sent the moment the previous one answered, by two remote clients of this thread in
   * turn (each has a reply channel of its own): what each call ended with.
   */
  /** Calls in order from this thread (the first relayed by the host, the next straight to the owner thread). */
  calls: (data: { id: string; calls: ReadonlyArray<{ tool: string; args?: JsonValue.JsonObject }> }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const outcomes: Array<string> = []
      for (const call of data.calls) {
        const exit = yield* Effect.either(workers.callTool(data.id, call.tool, call.args))
        outcomes.push(exit._tag === "Right" ? (exit.right.isError === true ? "isError" : "result") : exit.left._tag)
      }
      return outcomes
    }),

  sequence: (data: { id: string; n: number }) =>
    Effect.scoped(
      Effect.gen(function* () {
        const clients = [yield* McpWorkers, Context.get(yield* Layer.build(NodeMcpWorkers.layerRemote), McpWorkers)]
        const outcomes: Array<string> = []
        for (let i = 0; i < data.n; i++) {
          const exit = yield* Effect.either(clients[i % 2]!.callTool(data.id, "echo", { token: `s${i}` }))
          outcomes.push(
            exit._tag === "Right" ? (structured(exit.right).token === `s${i}` ? "ok" : "wrong result") : exit.left._tag
          )
        }
        return outcomes
      })
    ),

  /** Opens a worker and returns its id; the thread then exits. */
  open: (data: { config: ServerConfigInput; options?: McpWorkersOpenOptions }) =>
    Effect.flatMap(McpWorkers, (workers) => workers.open(data.config, data.options)),

  /** Closes a worker. */
  close: (data: { id: string }) => Effect.flatMap(McpWorkers, (workers) => workers.close(data.id)),

  /** Warms up, waits for "go", then calls `sleep`: two of these race. */
  race: (data: { id: string; token: string; ms: number }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      yield* workers.status(data.id)
      emit("ready")
      yield* waitFor("go")
      return yield* Effect.either(workers.callTool(data.id, "sleep", { ms: data.ms, token: data.token }))
    }).pipe(
      Effect.map((either) => (either._tag === "Right" ? { ok: structured(either.right) } : describe(either.left)))
    ),

  /**
   * Interrupts its own call once the worker is busy with it and the test says "go" (the host then blocks its own
   * thread); returns how long the interruption took.
   */
  interrupt: (data: { id: string; token: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const fiber = yield* Effect.fork(workers.callTool(data.id, "sleep", { ms: 10_000, token: data.token }))
      while (!(yield* workers.status(data.id)).busy) yield* Effect.sleep(5)
      emit("busy")
      yield* waitFor("go")
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      return { interruptMs: Date.now() - started }
    }),

  /** Starts a long call and never returns: the test terminates the thread. */
  hang: (data: { id: string; token: string; direct?: boolean }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      // A `ping` first gives this thread the worker's route: the call then goes straight to the owner thread.
      if (data.direct === true) yield* workers.ping(data.id)
      emit("calling")
      return yield* workers.callTool(data.id, "sleep", { ms: 60_000, token: data.token })
    }),

  /**
   * Starts a long call, then blocks its own event loop for `ms` (longer than the host's patience with a silent
   * remote) and waits, bounded, for an answer: the host must not drop the call without one.
   */
  stall: (data: { id: string; token: string; ms: number; direct?: boolean }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      if (data.direct === true) yield* workers.ping(data.id)
      const call = yield* Effect.fork(
        Effect.either(workers.callTool(data.id, "sleep", { ms: 10_000, token: data.token }, { timeout: 20_000 }))
      )
      while (!(yield* workers.status(data.id)).busy) yield* Effect.sleep(5)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, data.ms)
      const woke = Date.now()
      const answer = yield* Effect.option(Effect.timeout(Fiber.join(call), "3 seconds"))
      return {
        answer: Option.match(answer, {
          onNone: () => null,
          onSome: (either) => (either._tag === "Left" ? describe(either.left) : { _tag: "Success" })
        }),
        msAfterStall: Date.now() - woke
      }
    }),

  /** Warms up, waits for "go", then calls `sleep` of `ms` with the budget `timeout`, timed. */
  timedCall: (data: CallData) => callAfterGo(data, true),

  /** Like `timedCall`, without warming up: this thread has never heard from a host when it calls. */
  coldCall: (data: CallData) => callAfterGo(data, false),

  /** Every operation with no host in the process, timed. */
  noHost: (data: { id: string; config: ServerConfigInput }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const results: Record<string, { tag: string; ms: number; message: string }> = {}
      const operations = {
        status: workers.status(data.id),
        callTool: workers.callTool(data.id, "inc"),
        open: workers.open(data.config)
      }
      for (const [name, operation] of Object.entries(operations)) {
        const { exit, ms } = yield* timed(operation as Effect.Effect<unknown, McpWorkerError>)
        const error = exit._tag === "Failure" && exit.cause._tag === "Fail" ? exit.cause.error : undefined
        results[name] = { tag: error?._tag ?? "none", ms, message: error?.message ?? "" }
      }
      return results
    }),

  /** Uses a worker, holds its id while the host closes, then uses it again. */
  holdAcrossHostClose: (data: { id: string; config: ServerConfigInput }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const before = structured(yield* workers.callTool(data.id, "inc")).count as number
      const inflight = yield* Effect.fork(Effect.either(workers.callTool(data.id, "sleep", { ms: 10_000 })))
      while (!(yield* workers.status(data.id)).busy) yield* Effect.sleep(5)
      emit("ready")
      const pending = yield* Fiber.join(inflight)
      yield* waitFor("go")
      const after = yield* timed(
        Effect.all([
          Effect.flip(workers.callTool(data.id, "inc")),
          Effect.flip(workers.status(data.id)),
          Effect.flip(workers.open(data.config))
        ])
      )
      const [call, status, open] = after.exit._tag === "Success" ? after.exit.value : []
      return {
        before,
        pending: pending._tag === "Left" ? describe(pending.left) : null,
        call: describe(call),
        status: describe(status),
        open: describe(open),
        ms: after.ms
      }
    }),

  /** Opens with `envFrom`, resolved from this thread's `process.env`, and reads the variable in the server. */
  envFrom: (data: { config: StdioConfigInput; name: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id = yield* workers.open({ ...data.config, envFrom: [data.name] })
      const value = structured(yield* workers.callTool(id, "env", { name: data.name })).value
      yield* workers.close(id)
      return { value, here: process.env[data.name] ?? null }
    }),

  /** Errors arrive as instances of the core classes, with the same message. */
  errorClasses: (data: { id: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const error = yield* Effect.flip(workers.status(data.id))
      const local = new UnknownWorker({ workerId: data.id })
      return {
        instance: error instanceof UnknownWorker,
        sameMessage: error.message === local.message,
        tag: error._tag
      }
    }),

  /** The Promise facade in a remote thread, never disposed: the thread must still exit on its own. */
  promiseClient: (data: { id: string }) =>
    Effect.promise(async () => {
      const mcp: PromiseClient = makePromiseClient()
      const count = structured(await mcp.callTool(data.id, "inc")).count as number
      const error = await mcp.status("mcpw_unknown").then(
        () => null,
        (e: unknown) => ({ instance: e instanceof UnknownWorker, tag: (e as UnknownWorker)._tag })
      )
      return { count, error }
    }),

  /** Every request operation beyond tools, through the Promise client of this thread. */
  operations: (data: { id: string }) =>
    withPromiseClient(async (mcp) => ({
      operations: await exercise(mcp, data.id),
      progress: await exerciseProgress(mcp, data.id)
    })),

  /** The worker's notifications, through the Promise client of this thread (closes the worker). */
  events: (data: { id: string }) => withPromiseClient((mcp) => exerciseEvents(mcp, data.id)),

  /** Calls whose server sends many notifications first, each followed at once by `status`. */
  countsAfterAnswer: (data: { id: string }) => withPromiseClient((mcp) => exerciseCountsAfterAnswer(mcp, data.id)),

  /** A subscription, then at once a call, with this thread busy while the call is answered. */
  /**
   * The abort suite from this thread: relayed by the host (a progress callback), then straight to the owner thread
   * (a `ping` first gives the route) from the Promise client and from `layerRemote`, aborted 0 to 7 ms in.
   */
  abortThenCall: (data: { id: string; rounds: number }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const delayed = { at: "delay", ms: (round: number) => round % 8 } as const
      const relayed = yield* withPromiseClient((mcp) => abortThenCall(mcp, data.id, data.rounds))
      const direct = yield* withPromiseClient(async (mcp) => {
        await mcp.ping(data.id)
        return abortThenCall(mcp, data.id, data.rounds, delayed)
      })
      yield* workers.ping(data.id)
      const effect = yield* Effect.promise(() => abortThenCall(effectSurface(workers), data.id, data.rounds, delayed))
      return { relayed, direct, effect }
    }),

  /** Bad inputs (prepareSuite.ts), refused from this thread by `layerRemote` and by the Promise client. */
  refusals: (data: { id: string; inputs: ReadonlyArray<Input> }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const effect = yield* Effect.promise(() =>
        refusals(data.inputs, (name, args, options) =>
          Effect.runPromiseExit(workers.callTool(data.id, name as string, args as any, options)).then((exit) =>
            exit._tag === "Success" ? exit.value : Promise.reject(Cause.squash(exit.cause))
          )
        )
      )
      const promise = yield* withPromiseClient((mcp) =>
        refusals(data.inputs, (name, args, options) => mcp.callTool(data.id, name as string, args as any, options))
      )
      return { effect, promise }
    }),

  subscribeThenBusy: (data: { id: string }) => withPromiseClient((mcp) => exerciseSubscribeThenBusy(mcp, data.id)),

  /** C66: the signal suite through this thread's Promise client. */
  signal: (data: { id: string }) => withPromiseClient((mcp) => exerciseSignal(mcp, data.id)),

  /**
   * The behaviour suite on both paths of a remote's requests: straight to the owner thread (a `ping` first gives this
   * thread the worker's route, and is no `tools/call` the suite counts), and relayed by the host (every call with a
   * progress callback).
   */
  behaviour: (data: { effect: string; promise: string; effectRelayed: string; promiseRelayed: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      yield* workers.ping(data.effect)
      // Four workers, one run each: the runs go at once.
      return yield* Effect.all(
        {
          effect: Effect.promise(() => exerciseBehaviour(effectSurface(workers), data.effect)),
          promise: withPromiseClient(async (mcp) => {
            await mcp.ping(data.promise)
            return exerciseBehaviour(mcp, data.promise)
          }),
          effectRelayed: Effect.promise(() =>
            exerciseBehaviour(withProgress(effectSurface(workers)), data.effectRelayed)
          ),
          promiseRelayed: withPromiseClient((mcp) => exerciseBehaviour(withProgress(mcp), data.promiseRelayed))
        },
        { concurrency: "unbounded" }
      )
    }),

  /**
   * C59 from this thread: workers opened here with a tool filter (through layerRemote and the Promise client), the
   * filter suite on the direct path to the owner thread and on the path the host relays (a progress callback on every
   * call), and the refusals of bad filters, before anything starts.
   */
  toolFilter: (data: { config: ServerConfigInput; filter: any; bad: ReadonlyArray<readonly [unknown, string]> }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const run = (surface: (mcp: PromiseClient) => FilterSurface, open: (mcp: PromiseClient) => Promise<string>) =>
        withPromiseClient(async (mcp) => {
          const id = await open(mcp)
          try {
            return await exerciseFilter(surface(mcp), id, { listChanged: true })
          } finally {
            await mcp.close(id)
          }
        })
      const viaEffect = () => runEffect(workers.open(data.config, { tools: data.filter }))
      const viaPromise = (mcp: PromiseClient) => mcp.open(data.config, { tools: data.filter })
      const effect = yield* run(() => effectFilterSurface(workers), viaEffect)
      const effectRelayed = yield* run(() => relayedFilter(effectFilterSurface(workers)), viaEffect)
      const promise = yield* run((mcp) => mcp, viaPromise)
      const promiseRelayed = yield* run((mcp) => relayedFilter(mcp), viaPromise)
      const bad = yield* withPromiseClient((mcp) =>
        Promise.all(
          data.bad.flatMap(([tools]) => [
            openRefusal(mcp.open(data.config, { tools: tools as any })),
            openRefusal(runEffect(workers.open(data.config, { tools: tools as any })))
          ])
        )
      )
      return { effect, effectRelayed, promise, promiseRelayed, bad: bad.map((refusal) => refusal.path) }
    }),

  /** The server-everything suite through the Promise client of this thread. */
  everything: (data: { id: string }) => withPromiseClient((mcp) => exerciseEverything(mcp, data.id)),

  /** The tasks suite through the Promise client of this thread. */
  tasks: (data: { id: string }) => withPromiseClient((mcp) => exerciseTasks(mcp, data.id)),

  /** The tasks suite of the 2026-07-28 revision through the Promise client of this thread. */
  tasks26: (data: { id: string }) => withPromiseClient((mcp) => exerciseTasks26(mcp, data.id)),

  /**
   * The agent-host operations from this thread: the tools of a worker of server-everything as methods (Effect, then
   * Promise client, its errors the same), its declarations, and a document of two entries (one broken) opened and
   * closed from here.
   */
  agentHost: (data: { id: string; document: McpConfig.Document }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const tools = yield* workers.tools(data.id)
      const effectSum = (yield* tools.get_sum({ a: 20, b: 22 })) as { content: Array<{ text?: string }> }
      const unknown = yield* Effect.flip(ToolBinding.effect(workers.callTool, "mcpw_unknown", ["echo"]).echo({}))
      const promise = yield* withPromiseClient(async (mcp) => {
        const bound = await mcp.tools(data.id, { timeout: 10_000 })
        const echo = (await bound.echo({ message: "from a thread" }, { timeout: 10_000 })) as {
          content: Array<{ text?: string }>
        }
        const rejected = await bound.get_sum({ a: "not a number" } as any).then(
          (result) => ({ resolved: (result as { isError?: boolean }).isError === true }),
          (e: unknown) => ({ rejected: (e as { _tag?: string })._tag ?? String(e) })
        )
        const declarations = await mcp.describe(data.id, { namespace: "everything" })
        const opened = await mcp.openAll(data.document, { open: { timeout: 20_000 } })
        const closed = await mcp.closeAll(opened)
        return {
          methods: Object.keys(bound),
          echo: echo.content[0]?.text,
          rejected,
          declarations,
          opened: Object.fromEntries(
            Object.entries(opened).map(([name, entry]) => [name, entry._tag === "Opened" ? "Opened" : entry.error._tag])
          ),
          closed: Object.fromEntries(
            Object.entries(closed).map(([name, entry]) => [
              name,
              entry._tag === "Closed" ? entry.status.cleanup?.activeProcesses : entry.error._tag
            ])
          )
        }
      })
      return { effectSum: effectSum.content[0]?.text, unknown: unknown._tag, promise }
    }),

  /** C62 from a remote thread: the tools listed, a call whose parameters go in headers, an excluded tool refused. */
  paramHeaders: (data: { id: string }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const { tools } = yield* workers.listTools(data.id)
      const called = yield* workers.callTool(data.id, "headed", { region: "remote thread", priority: -3 })
      const refused = yield* Effect.flip(workers.callTool(data.id, "misdeclared", { score: 1 }))
      return {
        names: tools.map((tool) => tool.name),
        called: structured(called),
        refused: describe(refused)
      }
    }),

  /** Makes the server ask the client (an elicitation): the host's handler answers it. */
  ask: (data: { id: string }) =>
    Effect.map(
      Effect.flatMap(McpWorkers, (workers) => workers.callTool(data.id, "ask", { kind: "elicit" })),
      (result) => structured(result).answer
    ),

  /** `callTool` with `saveTo` through this thread's Promise client: a saved result, then a relative path refused. */
  saveTo: (data: { id: string; dir: string }) =>
    Effect.promise(async () => {
      const mcp = makePromiseClient()
      try {
        const saved: SavedResult = await mcp.callTool(
          data.id,
          "big",
          { bytes: 5_000 },
          { saveTo: `${data.dir}/remote.json` }
        )
        const relative = await mcp.callTool(data.id, "big", { bytes: 1 }, { saveTo: "remote.json" }).then(
          () => null,
          (e: any) => ({ tag: e._tag, path: e.path, delivery: e.delivery })
        )
        return { saved, relative }
      } finally {
        await mcp.dispose()
      }
    }),

  /**
   * Spills from this thread (C60): calls with their own spill through the Effect service (relayed, then straight to
   * the owner thread) and the Promise client, a worker opened here with a spill of its own, and the refusals. Each
   * answer is reported as this thread saw it.
   */
  spill: (data: { id: string; dir: string; config: StdioConfigInput }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const seen = (answer: unknown) => ({
        isSpilled: ResultFile.isSpilled(answer),
        summary: ResultFile.isSpilled(answer)
          ? {
              path: answer.path,
              bytes: answer.bytes,
              sha256: answer.sha256,
              isError: answer.isError,
              preview: answer.preview
            }
          : null
      })
      const refusal = (error: { _tag: string; path?: string; delivery?: string }) => [
        error._tag,
        error.path,
        error.delivery
      ]
      const spill = { onTooLarge: { spill: data.dir } }
      const effect = [
        seen(yield* workers.callTool(data.id, "big", { bytes: 100_000 }, spill)),
        seen(yield* workers.callTool(data.id, "big", { bytes: 100_000 }, spill))
      ]
      const relative = refusal(
        yield* Effect.flip(workers.callTool(data.id, "big", { bytes: 1 }, { onTooLarge: { spill: "out" } }))
      )
      const own = yield* workers.open(data.config, spill)
      const opened = [seen(yield* workers.callTool(own, "big", { bytes: 100_000 }))]
      const small = ResultFile.isSpilled(yield* workers.callTool(own, "big", { bytes: 10 }))
      const failure = yield* Effect.flip(workers.callTool(own, "big", { bytes: 100_000 }, { onTooLarge: "fail" }))
      const failed = [failure._tag, (failure as { delivery?: string }).delivery]
      yield* workers.close(own)
      const openRelative = refusal(yield* Effect.flip(workers.open(data.config, { onTooLarge: { spill: "out" } })))
      const promise = yield* withPromiseClient(async (mcp) => [
        seen(await mcp.callTool(data.id, "big", { bytes: 100_000 }, spill)),
        seen(await mcp.callTool(data.id, "big", { bytes: 100_000 }, spill))
      ])
      return { effect, relative, opened, small, failed, openRelative, promise }
    }),

  /** A host in this thread: opens a worker, reports its id, and runs until the test terminates the thread. */
  host: (data: { config: ServerConfigInput }) =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      emit("opened", yield* workers.open(data.config))
      return yield* Effect.never
    })
}

const { scenario, data } = workerData as ThreadInput
const program = scenarios[scenario](data)

const encode = (error: unknown): { error: unknown; tagged: boolean } =>
  Schema.is(McpWorkerError)(error)
    ? { error: Schema.encodeSync(McpWorkerError)(error), tagged: true }
    : { error: String(error), tagged: false }

const layer = scenario === "host" ? NodeMcpWorkers.layer() : NodeMcpWorkers.layerRemote
const exit = await Effect.runPromiseExit(Effect.provide(program, layer))
port.postMessage(
  exit._tag === "Success"
    ? { _tag: "Done", value: exit.value }
    : { _tag: "Failed", ...encode(exit.cause._tag === "Fail" ? exit.cause.error : exit.cause) }
)
