// The cluster's behaviour across processes, run once per runner storage (Cluster.postgres.test.ts,
// Cluster.sqlite.test.ts): three runner processes on 127.0.0.1 and the test process as a client-only one. A worker
// opened on one runner is used from the others, and the cluster's failure modes (a runner killed mid-call and
// started again on its port, a runner joining, a partition, a handler defect, races across runners) end every call
// with what the server executed. Each storage's file shares its three runners between its tests.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import fc from "fast-check"
import { createRequire } from "node:module"
import { McpWorkers } from "../../packages/core/src/McpWorkers.js"
import {
  clientLayer,
  isAlive,
  loggedServer,
  type Outcome,
  type Runner,
  startProxy,
  startRunner,
  type Storage
} from "./harness.js"
import { slowStarts } from "../fixtures/servers.js"
import { expectedRounds } from "../node/abortSuite.js"
import { badInputs } from "../node/prepareSuite.js"
import { freePort } from "./postgres.js"
import { sqlLayer } from "./storage.js"
import type { RecordedSpan } from "../node/recordingTracer.js"

const everything = {
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"]
}

/** One storage: whether it can run here (and why not), and how to start and stop it. */
export interface StorageFixture {
  readonly name: string
  readonly skip: string | undefined
  readonly start: () => Promise<{ readonly storage: Storage; readonly stop: () => void }>
}

/** The failure tests this storage runs (each starts runners of its own; see the files for which and why). */
export type Failure = "partition" | "restart"

const sqlRows = (query: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, any>>(query))

const tagOf = (outcome: Outcome): string => (outcome.ok ? "ok" : String(outcome.error._tag))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const eventually = async (check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(100)
  }
  return check()
}

export const clusterSuite = (fixture: StorageFixture, failures: ReadonlyArray<Failure>) => {
  const available = fixture.skip === undefined
  if (!available) console.warn(`cluster tests on ${fixture.name} skipped: ${fixture.skip}`)
  const skipped = available ? "" : ` (skipped: ${fixture.skip})`

  let stopStorage: (() => void) | undefined
  let storage: Storage
  let a: Runner
  let b: Runner
  let c: Runner
  let client: ManagedRuntime.ManagedRuntime<McpWorkers, unknown>
  let sql: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const logs: Array<ReturnType<typeof loggedServer>> = []
  const extra: Array<Runner> = []

  const server = () => {
    const log = loggedServer()
    logs.push(log)
    return log
  }

  const open = async (runner: Runner, log: ReturnType<typeof loggedServer>): Promise<string> => {
    const opened = await runner.call("open", log.config)
    assert.isTrue(opened.ok, JSON.stringify(opened))
    return (opened as { value: string }).value
  }

  // A status or cancel to a runner that cannot answer waits this long (the runners' requestTimeout).
  const controlBudgetMs = 4000
  const start = (options: {
    readonly port: number
    readonly listenPort?: number
    readonly env?: Record<string, string>
  }) =>
    startRunner(storage, { ...options, env: { MCPW_REQUEST_TIMEOUT: String(controlBudgetMs / 1000), ...options.env } })

  beforeAll(async () => {
    if (!available) return
    const started = await fixture.start()
    storage = started.storage
    stopStorage = started.stop
    // A's registry has a handler that dies (the tool "defect"); the other tools behave.
    const runners = await Promise.allSettled(
      [{ MCPW_DEFECT: "1" }, {}, {}].map(async (env) => start({ port: await freePort(), env }))
    )
    // the ones that started are stopped by afterAll even when another did not
    for (const runner of runners) if (runner.status === "fulfilled") extra.push(runner.value)
    for (const runner of runners) if (runner.status === "rejected") throw runner.reason
    ;[a, b, c] = runners.map((runner) => (runner as PromiseFulfilledResult<Runner>).value)
    client = ManagedRuntime.make(clientLayer(storage))
    sql = ManagedRuntime.make(sqlLayer(storage.kind, storage.target))
    await client.runPromise(Effect.void)
  }, 180_000)

  afterAll(async () => {
    await client?.dispose()
    await sql?.dispose()
    await Promise.all([...new Set([a, b, c, ...extra])].filter((r) => r !== undefined).map((r) => r.stop()))
    stopStorage?.()
    for (const log of logs) log.remove()
  }, 60_000)

  describe.skipIf(!available)(`a worker on a cluster (${fixture.name})${skipped}`, () => {
    it("is used statefully from every runner and a client-only process; status names its runner", async () => {
      const log = server()
      const id = await open(a, log)
      const counts: Array<number> = []
      for (const runner of [b, c, a, b]) {
        const outcome = await runner.request("callTool", id, ["inc", {}], { timeoutMs: 5000 })
        assert.isTrue(outcome.ok, JSON.stringify(outcome))
        counts.push((outcome as any).value.structuredContent.count)
      }
      const fromClient = await client.runPromise(
        Effect.flatMap(McpWorkers, (workers) => workers.callTool(id, "inc", {}, { timeout: "5 seconds" }))
      )
      counts.push((fromClient.structuredContent as any).count)
      assert.deepStrictEqual(counts, [1, 2, 3, 4, 5])
      const status = await c.call("status", id)
      assert.isTrue(status.ok)
      assert.deepStrictEqual((status as any).value.runner, { address: `127.0.0.1:${a.port}`, group: a.group })
      assert.strictEqual((status as any).value.workerId, id)
      // close from another runner confirms the cleanup on the owner's machine
      const pid = (status as any).value.pid as number
      const closed = await b.call("close", id)
      assert.isTrue(closed.ok, JSON.stringify(closed))
      assert.strictEqual((closed as any).value.cleanup.activeProcesses, 0)
      assert.isFalse(isAlive(pid))
      assert.strictEqual(tagOf(await c.request("ping", id, [], { timeoutMs: 2000 })), "UnknownWorker")
      assert.strictEqual(log.lines().filter((l) => l.event === "call").length, 5)
    })

    it("C70: a task started through one runner is read through another and collected by a client-only process", async () => {
      const opened = await a.call("open", everything)
      assert.isTrue(opened.ok, JSON.stringify(opened))
      const id = (opened as { value: string }).value
      const started = await b.request("startTask", id, ["simulate-research-query", { topic: "runners" }], {
        timeoutMs: 10_000
      })
      assert.isTrue(started.ok, JSON.stringify(started))
      const taskId = (started as any).value.task.taskId as string
      const read = await c.request("getTask", id, [taskId], { timeoutMs: 5000 })
      assert.isTrue(read.ok, JSON.stringify(read))
      assert.oneOf((read as any).value.status, ["working", "completed"])
      const result = await client.runPromise(
        Effect.flatMap(McpWorkers, (workers) => workers.taskResult(id, taskId, { timeout: "60 seconds" }))
      )
      assert.include((result.content[0] as { text: string }).text, "# Research Report: runners")
      // C123: a task cancelled through one runner, waited for through another, says how it ended.
      const doomed = await b.request("startTask", id, ["simulate-research-query", { topic: "moot" }], {
        timeoutMs: 10_000
      })
      const doomedId = (doomed as any).value.task.taskId as string
      assert.strictEqual(
        ((await a.request("cancelTask", id, [doomedId], { timeoutMs: 5000 })) as any).value.status,
        "cancelled"
      )
      const ended = await c.request("taskResult", id, [doomedId], { timeoutMs: 10_000 })
      assert.strictEqual(tagOf(ended), "TaskEnded", JSON.stringify(ended))
      assert.deepStrictEqual([(ended as any).error.state, (ended as any).error.delivery], ["cancelled", "delivered"])
      const closed = await c.call("close", id)
      assert.strictEqual((closed as any).value.cleanup.activeProcesses, 0)
    })

    it("refuses a second request in flight as WorkerBusy (not sent), and a caller's interrupt or timeout cancels exactly its request", async () => {
      const log = server()
      const id = await open(a, log)
      const first = b.send("request", "callTool", id, ["sleep", { ms: 1500, token: "first" }], { timeoutMs: 5000 })
      await eventually(() => log.lines().some((l) => l.token === "first"), 5000)
      const busy = await c.request("callTool", id, ["echo", { token: "second" }], { timeoutMs: 2000 })
      assert.strictEqual(tagOf(busy), "WorkerBusy", JSON.stringify(busy))
      assert.strictEqual((busy as any).error.delivery, "not_sent")
      assert.isTrue((await first.outcome).ok)
      assert.isFalse(log.lines().some((l) => l.token === "second"))

      // interrupt from B: exactly that request is cancelled at the server
      const long = b.send("request", "callTool", id, ["sleep", { ms: 10_000, token: "interrupted" }], {
        timeoutMs: 20_000
      })
      await eventually(() => log.lines().some((l) => l.token === "interrupted"), 5000)
      b.interrupt(long.id)
      assert.strictEqual(tagOf(await long.outcome), "Interrupted")
      const callId = log.lines().find((l) => l.token === "interrupted")!.id
      assert.isTrue(await eventually(() => log.lines().some((l) => l.event === "cancelled" && l.id === callId), 5000))

      // C's budget ends its call as DeliveryUnknown, cancelled at the server
      const started = Date.now()
      const timedOut = await c.request("callTool", id, ["sleep", { ms: 10_000, token: "timeout" }], { timeoutMs: 700 })
      assert.strictEqual(tagOf(timedOut), "DeliveryUnknown", JSON.stringify(timedOut))
      assert.isBelow(Date.now() - started, 3000)
      const timeoutId = log.lines().find((l) => l.token === "timeout")!.id
      assert.isTrue(
        await eventually(() => log.lines().some((l) => l.event === "cancelled" && l.id === timeoutId), 5000)
      )
      // the worker is ready again, from anywhere
      assert.isTrue((await c.request("callTool", id, ["echo", { token: "after" }], { timeoutMs: 5000 })).ok)
      await a.call("close", id)
    })

    it("C121: an idle budget reaches the worker's runner: steady progress keeps a call, silence ends it", async () => {
      const log = server()
      const id = await open(a, log)
      const call = (args: { steps: number; delayMs: number }, idleTimeout: number) =>
        client.runPromise(
          Effect.flip(
            Effect.flatMap(McpWorkers, (workers) =>
              workers.callTool(id, "progress", args, { timeout: "20 seconds", idleTimeout })
            )
          ).pipe(Effect.orElseSucceed(() => "ok" as const))
        )
      // Progress every 50 ms for 600 ms starts the 400 ms idle wait anew each time.
      assert.strictEqual(await call({ steps: 12, delayMs: 50 }, 400), "ok")
      const started = Date.now()
      const stalled = await call({ steps: 2, delayMs: 20_000 }, 300)
      assert.deepInclude(stalled, { _tag: "DeliveryUnknown", reason: "timeout", delivery: "unknown" })
      assert.isBelow(Date.now() - started, 10_000)
      const stalledId = log.lines().filter((l) => l.event === "call" && l.name === "progress")[1]!.id
      assert.isTrue(
        await eventually(() => log.lines().some((l) => l.event === "cancelled" && l.id === stalledId), 5000)
      )
      await a.call("close", id)
    })

    it("C39: after an answered interrupt the worker is free: 1,000 rounds from B, none WorkerBusy", async () => {
      const log = server()
      const id = await open(a, log)
      const rounds = await b.call("abortThenCall", id, 1_000)
      assert.isTrue(rounds.ok, JSON.stringify(rounds))
      assert.deepStrictEqual((rounds as { value: unknown }).value, expectedRounds(1_000, "Interrupted:undefined"))
      await a.call("close", id)
    }, 120_000)

    it("C16: 100 generated bad inputs are refused alike, unsent, for a worker of another runner and one of its own", async () => {
      const [logA, logB] = [server(), server()]
      const [onA, onB] = [await open(a, logA), await open(b, logB)]
      const inputs = badInputs(100, 38)
      const remote = await b.call("refusals", onA, inputs)
      const local = await b.call("refusals", onB, inputs)
      assert.isTrue(remote.ok && local.ok, JSON.stringify([remote, local]))
      const [across, own] = [remote, local].map((outcome) => (outcome as { value: Array<string> }).value)
      for (const refusal of own!) assert.match(refusal, /^InvalidInput arguments \S+ not_sent$/)
      assert.deepStrictEqual(across, own)
      assert.deepStrictEqual(
        [...logA.lines(), ...logB.lines()].filter((l) => l.event === "call"),
        []
      )
      await Promise.all([a.call("close", onA), b.call("close", onB)])
    })

    it("property: calls, timeouts, interrupts and cancels from B and C agree with what the server executed", async () => {
      const log = server()
      const id = await open(a, log)
      let run = 0
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              from: fc.constantFrom("b", "c"),
              kind: fc.constantFrom("call", "timeout", "interrupt", "cancel"),
              ms: fc.integer({ min: 20, max: 300 }),
              delay: fc.integer({ min: 0, max: 150 })
            }),
            { minLength: 2, maxLength: 6 }
          ),
          async (steps) => {
            run++
            const outcomes = await Promise.all(
              steps.map(async (step, i) => {
                const runner = step.from === "b" ? b : c
                const token = `r${run}s${i}`
                await sleep(step.delay)
                if (step.kind === "cancel") {
                  const status = await runner.call("status", id)
                  const requestId = status.ok ? (status as any).value.requestId : null
                  if (requestId !== null) await runner.call("cancel", id, requestId)
                  return { token: null, outcome: status }
                }
                const timeoutMs = step.kind === "timeout" ? Math.max(10, step.ms - 10) : 10_000
                const sent = runner.send("request", "callTool", id, ["sleep", { ms: step.ms, token }], { timeoutMs })
                if (step.kind === "interrupt") {
                  await sleep(step.ms / 2)
                  runner.interrupt(sent.id)
                }
                return { token, outcome: await sent.outcome }
              })
            )
            // what the server saw, once every cancel had time to arrive
            await sleep(200)
            const lines = log.lines()
            const calls = lines.filter((l) => l.event === "call")
            assert.strictEqual(new Set(calls.map((l) => l.id)).size, calls.length, "a request id executed twice")
            for (const { token, outcome } of outcomes) {
              if (token === null) continue
              const executed = calls.filter((l) => l.token === token).length
              const tag = tagOf(outcome)
              if (tag === "ok") assert.strictEqual(executed, 1, `${token} succeeded`)
              else if (tag === "WorkerBusy" || tag === "DeadlineExceeded")
                assert.strictEqual(executed, 0, `${token} ${tag}`)
              else if (tag === "DeliveryUnknown" || tag === "Interrupted")
                assert.isAtMost(executed, 1, `${token} ${tag}`)
              else assert.fail(`${token}: unexpected ${JSON.stringify(outcome)}`)
            }
            // every call has ended at the server before the next run
            await eventually(async () => {
              const status = await b.call("status", id)
              return status.ok && (status as any).value.busy === false
            }, 5000)
          }
        ),
        { numRuns: 5 }
      )
      await a.call("close", id)
    })

    it("a handler defect answers its own request and is not replayed: it ran once, the worker serves on", async () => {
      const log = server()
      const id = await open(a, log)
      const pid = ((await a.call("status", id)) as any).value.pid
      const outcome = await b.request("callTool", id, ["defect", {}], { timeoutMs: 5000 })
      // the request reached the owner and broke there: what it did is not known
      assert.strictEqual(tagOf(outcome), "DeliveryUnknown", JSON.stringify(outcome))
      const defectsOf = () =>
        a
          .stdout()
          .split("\n")
          .filter((line) => line.startsWith("DEFECT ")).length
      const before = defectsOf()
      // a facade rebuilt after a defect would replay its in-flight request at once (resends every 100 ms)
      await sleep(1500)
      assert.strictEqual(defectsOf(), before, "the broken request ran again")
      assert.isAtLeast(before, 1)
      const after = await c.request("callTool", id, ["inc", {}], { timeoutMs: 5000 })
      assert.isTrue(after.ok, JSON.stringify(after))
      assert.strictEqual(((await b.call("status", id)) as any).value.pid, pid)
      await a.call("close", id)
    })

    it("shard locks: each runner holds its own group's one shard in the lock table, no advisory lock is taken", async () => {
      // Every runner's group list is [its own group]; advisory lock numbers come from the index into that list, so
      // all of them would ask for the same number. The layer turns advisory locks off: the table keys by shard name.
      const rows = await sql.runPromise(sqlRows("SELECT shard_id, address FROM mcp_worker_locks"))
      for (const runner of [a, b, c]) {
        const held = rows.filter((row) => row.shard_id === `${runner.group}:1`)
        assert.deepStrictEqual(
          held.map((row) => row.address),
          [`127.0.0.1:${runner.port}`],
          `${runner.group}: ${JSON.stringify(rows)}`
        )
      }
      if (storage.kind === "postgres") {
        const advisory = await sql.runPromise(
          sqlRows("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'")
        )
        assert.strictEqual(advisory[0]!.n, 0)
      }
      // Each runner's layer is ready only once it holds its own shard, so three ready runners hold three locks: the
      // rows above are what they hold, not leftovers.
    })

    it("events stream across runners, in order, and end when the worker is closed from another runner", async () => {
      const log = server()
      const id = await open(a, log)
      const methods = ["notifications/tools/list_changed", "notifications/message"]
      // Three events: a subscription that begins between one call's two notifications sees that call's last first.
      const seen = b.send("events", id, 3, 20_000)
      // the subscription is set up in the background: notify until B has its two
      let settled = false
      void seen.outcome.then(() => (settled = true))
      while (!settled) {
        await c.request("callTool", id, ["notify", { methods }], { timeoutMs: 5000 })
        await sleep(200)
      }
      const events = await seen.outcome
      assert.isTrue(events.ok, JSON.stringify(events))
      const received: Array<any> = (events as any).value
      const first = received[0]?.method === methods[0] ? 0 : 1
      // Whole calls, in the order the server sent them.
      assert.deepStrictEqual(
        received.slice(first, first + 2).map((event) => event.method),
        methods,
        JSON.stringify(events)
      )
      assert.deepStrictEqual(received[first + 1].params.data, "line 0")
      // a stream from C that only the close ends
      const ending = c.send("events", id, 1000, 20_000)
      await sleep(500)
      assert.isTrue((await b.call("close", id)).ok)
      const ended = await ending.outcome
      assert.isTrue(ended.ok, JSON.stringify(ended))
      assert.isArray((ended as any).value)
    })

    it("C90: a server slower than the era probe's window opens within the caller's budget, on every era setting", async () => {
      const opened = await Promise.all(
        slowStarts.map(async ({ protocol, config }) => {
          const outcome = await a.call("open", config(7_500), { timeout: "20 seconds" })
          if (!outcome.ok) return { protocol, era: JSON.stringify(outcome), echoed: "not opened" }
          const id = (outcome as { value: string }).value
          const status = await b.call("status", id)
          // A call after the open, from another runner: a late answer to the probe broke nothing.
          const echoed = await c.request("callTool", id, ["echo", { token: "after" }], { timeoutMs: 5000 })
          await b.call("close", id)
          return {
            protocol,
            era: status.ok ? (status as any).value.era : JSON.stringify(status),
            echoed: tagOf(echoed)
          }
        })
      )
      assert.deepStrictEqual(
        opened,
        slowStarts.map(({ protocol, era }) => ({ protocol, era, echoed: "ok" }))
      )
    })

    it("refuses unsent what only the owner's runner can do: open on a client-only process, onProgress, saveTo and a spill elsewhere", async () => {
      const log = server()
      const refused = await client.runPromise(
        Effect.flip(Effect.flatMap(McpWorkers, (workers) => workers.open(log.config)))
      )
      assert.strictEqual(refused._tag, "OpenFailed")
      assert.match(refused.message, /client of the cluster/)
      const id = await open(a, log)
      const progress = await b.request("callTool", id, ["progress", { steps: 2 }], { onProgress: "report" })
      assert.strictEqual(tagOf(progress), "InvalidInput", JSON.stringify(progress))
      assert.strictEqual((progress as any).error.delivery, "not_sent")
      assert.strictEqual((progress as any).error.path, "options.onProgress")
      const saved = await b.request("callTool", id, ["echo", { token: "saved" }], { saveTo: "/tmp/mcpw-never" })
      assert.strictEqual(tagOf(saved), "InvalidInput", JSON.stringify(saved))
      assert.strictEqual((saved as any).error.path, "options.saveTo")
      assert.strictEqual((saved as any).error.delivery, "not_sent")
      const spilled = await b.request("callTool", id, ["echo", { token: "spilled" }], {
        onTooLarge: { spill: "/tmp" }
      })
      assert.strictEqual(tagOf(spilled), "InvalidInput", JSON.stringify(spilled))
      assert.strictEqual((spilled as any).error.path, "options.onTooLarge.spill")
      assert.strictEqual((spilled as any).error.delivery, "not_sent")
      assert.strictEqual(log.lines().filter((l) => l.event === "call").length, 0)
      // "fail" travels: the call goes to the owner's runner, and answers as usual there.
      const failing = await b.request("callTool", id, ["echo", { token: "fail" }], { onTooLarge: "fail" })
      assert.isTrue(failing.ok, JSON.stringify(failing))
      // on the owner's runner itself, progress reaches the caller
      const local = await a.request("callTool", id, ["progress", { steps: 2 }], { onProgress: "report" })
      assert.isTrue(local.ok, JSON.stringify(local))
      assert.deepStrictEqual(
        (local as any).value.progress.map((p: any) => p.progress),
        [1, 2]
      )
      await a.call("close", id)
    })

    it("C83: where no runner traces, a caller's span of any tracer crosses, and an untraced call carries nothing", async () => {
      const id = await open(a, server())
      // Untraced, from another runner and from a client-only process; then inside a span of Effect's default tracer.
      assert.isTrue((await b.request("callTool", id, ["echo", { token: "untraced" }], { timeoutMs: 5000 })).ok)
      const call = (token: string) =>
        Effect.flatMap(McpWorkers, (workers) => workers.callTool(id, "echo", { token }, { timeout: "5 seconds" }))
      await client.runPromise(call("client"))
      const span = await client.runPromise(
        Effect.currentSpan.pipe(
          Effect.tap(() => call("spanned")),
          Effect.withSpan("test.spanned")
        )
      )
      const metas = await a.request("callTool", id, ["metas", {}], { timeoutMs: 5000 })
      assert.isTrue(metas.ok, JSON.stringify(metas))
      const sent = ((metas as any).value.structuredContent.metas as Array<Record<string, string> | null>).map(
        (meta) => meta?.traceparent ?? null
      )
      assert.deepStrictEqual(sent, [null, null, `00-${span.traceId}-${span.spanId}-01`, null])
      await a.call("close", id)
    })

    it("C83, C84: a call traced on one runner reaches the server of another's worker in that trace", async () => {
      const [d, e] = await Promise.all(
        [0, 1].map(async () => start({ port: await freePort(), env: { MCPW_TRACE: "1" } }))
      )
      extra.push(d!, e!)
      const id = await open(d!, server())
      const incoming = {
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceState: "vendor=incoming"
      }
      const callers: Array<{ traceId: string; spanId: string }> = []
      for (const mode of ["on", "baggage", "off"]) {
        const traced = await e!.call("traced", id, mode, incoming, { user: "alice smith" })
        assert.isTrue(traced.ok, JSON.stringify(traced))
        callers.push((traced as { value: { traceId: string; spanId: string } }).value)
      }
      // From a runner that does not trace.
      assert.isTrue((await b.request("callTool", id, ["echo", { token: "untraced" }], { timeoutMs: 5000 })).ok)
      const metas = await d!.request("callTool", id, ["metas", {}], { timeoutMs: 5000 })
      assert.isTrue(metas.ok, JSON.stringify(metas))
      const sent = ((metas as any).value.structuredContent.metas as Array<Record<string, string> | null>).map((meta) =>
        meta === null ? null : { traceparent: meta.traceparent, tracestate: meta.tracestate, baggage: meta.baggage }
      )
      const spans = [
        ...((await d!.call("spans")) as { value: Array<RecordedSpan> }).value,
        ...((await e!.call("spans")) as { value: Array<RecordedSpan> }).value
      ]
      // The server's parent is a span of the owner's runner, below the caller's span in the caller's trace.
      const ancestors = (traceparent: string | undefined) => {
        const [, traceId, spanId] = (traceparent ?? "").split("-")
        const chain: Array<string> = []
        for (let span = spans.find((s) => s.spanId === spanId && s.traceId === traceId); span !== undefined;) {
          chain.push(span.spanId)
          const parent: string | undefined = span.parent
          span = spans.find((s) => s.spanId === parent)
          if (span === undefined && parent !== undefined) chain.push(parent)
        }
        return { traceId, chain }
      }
      for (const [i, caller] of callers.slice(0, 2).entries()) {
        const { traceId, chain } = ancestors(sent[i]?.traceparent)
        assert.strictEqual(traceId, caller.traceId)
        assert.include(chain.slice(1), caller.spanId, JSON.stringify(sent[i]))
      }
      assert.strictEqual(callers[1]!.traceId, incoming.traceId)
      // The incoming span's trace state and the caller's baggage crossed with it; a call with tracing turned off sent
      // nothing (its span ids are no W3C ids).
      assert.deepStrictEqual(
        sent.slice(0, 3).map((meta) => (meta === null ? null : { tracestate: meta.tracestate, baggage: meta.baggage })),
        [
          { tracestate: undefined, baggage: undefined },
          { tracestate: incoming.traceState, baggage: "user=alice%20smith" },
          null
        ]
      )
      // An untraced caller's call: the owner's runner traces its own work, so the server's parent is a root of its
      // own trace, in no caller's trace, carrying nothing else.
      const untraced = ancestors(sent[3]?.traceparent)
      assert.notInclude(
        callers.map((caller) => caller.traceId),
        untraced.traceId
      )
      assert.isAbove(untraced.chain.length, 0)
      assert.isUndefined(spans.find((span) => span.spanId === untraced.chain.at(-1))?.parent)
      assert.deepStrictEqual(
        Object.keys(sent[3]!).filter((key) => sent[3]![key as "traceparent"] !== undefined),
        ["traceparent"]
      )
      await d!.call("close", id)
    }, 90_000)

    it("a runner joining mid-run moves nothing: the call in flight ends, the same server serves on", async () => {
      const log = server()
      const id = await open(a, log)
      const before = await b.call("status", id)
      const inFlight = b.send("request", "callTool", id, ["sleep", { ms: 2500, token: "during-join" }], {
        timeoutMs: 30_000
      })
      const d = await start({ port: await freePort() })
      extra.push(d)
      assert.isTrue((await inFlight.outcome).ok)
      const fromD = await d.request("callTool", id, ["inc", {}], { timeoutMs: 5000 })
      assert.isTrue(fromD.ok, JSON.stringify(fromD))
      const after = await d.call("status", id)
      assert.strictEqual((after as any).value.pid, (before as any).value.pid)
      assert.strictEqual(log.lines().filter((l) => l.event === "call").length, 2)
      await d.call("close", id)
    }, 60_000)
  })

  describe.skipIf(!available)(`failures across runners (${fixture.name})${skipped}`, () => {
    it.runIf(failures.includes("partition"))(
      "a partition with calls in flight: the caller's budget ends them as DeliveryUnknown, the owner is not evicted, nothing runs twice",
      async () => {
        const port = await freePort()
        // the runner listens on its own port, and is reached through the proxy on `port`
        const listenPort = await freePort()
        const gate = await startProxy(listenPort, port)
        const p = await start({ port, listenPort })
        extra.push(p)
        const log = server()
        const id = await open(p, log)
        assert.isTrue((await b.request("callTool", id, ["inc", {}], { timeoutMs: 5000 })).ok)
        const pid = ((await p.call("status", id)) as any).value.pid
        const inFlight = b.send("request", "callTool", id, ["sleep", { ms: 500, token: "in-flight" }], {
          timeoutMs: 1500
        })
        await eventually(() => log.lines().some((l) => l.token === "in-flight"), 5000)
        const requestId = ((await p.call("status", id)) as any).value.requestId as string
        gate.block()
        const started = Date.now()
        // a cancel and a status that get no answer may have arrived (the cancel may have cancelled): unknown, not
        // `not_sent`, at the runners' budget for them
        const cancel = c.call("cancel", id, requestId)
        const status = b.call("status", id)
        const during = await c.request("callTool", id, ["echo", { token: "during" }], { timeoutMs: 1500 })
        assert.strictEqual(tagOf(during), "DeliveryUnknown", JSON.stringify(during))
        assert.isBelow(Date.now() - started, 4000)
        for (const [what, outcome] of [
          ["cancel", await cancel],
          ["status", await status]
        ] as const) {
          assert.strictEqual(tagOf(outcome), "DeliveryUnknown", `${what}: ${JSON.stringify(outcome)}`)
          assert.strictEqual((outcome as any).error.delivery, "unknown")
        }
        assert.strictEqual(((await cancel) as any).error.requestId, requestId)
        assert.isBelow(Date.now() - started, controlBudgetMs + 3000)
        assert.strictEqual(tagOf(await inFlight.outcome), "DeliveryUnknown")
        // the owner's own process still has its worker, and its local callers are served
        assert.isTrue((await p.request("callTool", id, ["echo", { token: "local" }], { timeoutMs: 5000 })).ok)
        gate.unblock()
        assert.isTrue(
          await eventually(
            async () => (await b.request("callTool", id, ["echo", { token: "healed" }], { timeoutMs: 1000 })).ok,
            15_000
          )
        )
        assert.strictEqual(((await c.call("status", id)) as any).value.pid, pid)
        const calls = log.lines().filter((l) => l.event === "call")
        assert.strictEqual(new Set(calls.map((l) => l.id)).size, calls.length)
        assert.isAtMost(calls.filter((l) => l.token === "during").length, 1)
        await p.call("close", id)
        await p.stop()
        await gate.close()
      },
      90_000
    )

    it.runIf(failures.includes("restart"))(
      "a runner SIGKILLed mid-call: DeliveryUnknown, one execution, its server gone; started again on its port, the old id is gone and nothing re-runs",
      async () => {
        const port = await freePort()
        const k = await start({ port })
        const log = server()
        const id = await open(k, log)
        const pid = ((await k.call("status", id)) as any).value.pid as number
        const started = Date.now()
        const inFlight = b.send("request", "callTool", id, ["sleep", { ms: 10_000, token: "killed" }], {
          timeoutMs: 2500
        })
        await eventually(() => log.lines().some((l) => l.token === "killed"), 5000)
        k.child.kill("SIGKILL")
        await k.exited
        const outcome = await inFlight.outcome
        assert.strictEqual(tagOf(outcome), "DeliveryUnknown", JSON.stringify(outcome))
        assert.isBelow(Date.now() - started, 6000)
        assert.strictEqual(log.lines().filter((l) => l.token === "killed").length, 1)
        // the host's reaper ended the server's tree
        assert.isTrue(await eventually(() => !isAlive(pid), 5000))

        // the same address, a new process: a new group, so the old id reaches nobody and is refused unsent
        const again = await start({ port })
        extra.push(again)
        assert.notStrictEqual(again.group, k.group)
        assert.isTrue(
          await eventually(async () => {
            const o = await c.request("callTool", id, ["echo", { token: "old-id" }], { timeoutMs: 1000 })
            return tagOf(o) === "UnknownWorker" && (o as any).error.delivery === "not_sent"
          }, 10_000)
        )
        // a worker of the new process is reached from the others (its runner is told apart from the old one)
        const fresh = server()
        const freshId = await open(again, fresh)
        assert.isTrue(
          await eventually(
            async () => (await b.request("callTool", freshId, ["inc", {}], { timeoutMs: 1000 })).ok,
            10_000
          )
        )
        await sleep(500)
        assert.strictEqual(log.lines().filter((l) => l.event === "call").length, 1, "the killed call ran again")
        assert.isFalse(fresh.lines().some((l) => l.token === "killed" || l.token === "old-id"))
        await again.call("close", freshId)
      },
      90_000
    )
  })
}
