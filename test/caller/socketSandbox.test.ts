// C113: the socket plane of @mcp-worker/caller as a real sandbox process of Node, Deno 2 and Bun 1 against a real
// host's listener: one behaviour suite, run once per runtime.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createInterface } from "node:readline"
import { statefulConfig } from "../fixtures/servers.js"
import { eventually } from "../node/helpers.js"
import { listening, socketPath } from "../node/listenSandbox.js"
import { runtimes, sandboxBundle, startSandbox, type Runtime } from "./socketSandbox.js"

const entry = sandboxBundle()

const sandbox = (runtime: Runtime, socket: string) =>
  Effect.acquireRelease(
    Effect.promise(() => startSandbox(runtime, entry(), socket)),
    (box) => Effect.sync(() => box.child.kill("SIGKILL"))
  )

const call = (workerId: string, name: string, args: object, extra: object = {}) => ({
  op: "request",
  workerId,
  method: "tools/call",
  params: { name, arguments: args },
  ...extra
})

/** A host in its own process (test/fixtures/listen-host.ts), to be SIGKILLed; its grant. */
const hostProcess = Effect.gen(function* () {
  const socket = socketPath()
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
  const host = spawn(process.execPath, ["--import", "tsx", "test/fixtures/listen-host.ts", socket.path, "{}"], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise<void>((resolve) => host.once("exit", () => resolve()))
  yield* Effect.addFinalizer(() => Effect.promise(() => (host.kill("SIGKILL"), exited)))
  const grant = yield* Effect.promise(
    () =>
      new Promise<string>((resolve) =>
        createInterface({ input: host.stdout! }).on("line", (line) => {
          if (line.startsWith("READY ")) resolve(line.slice("READY ".length))
        })
      )
  )
  return { socket: socket.path, host, exited, grant }
})

describe.each(runtimes)("C113: the socket caller under $name", (runtime) => {
  it.scopedLive.skipIf(runtime.missing !== undefined)(
    `calls, progress, busy, cancel by id, abort, timeout, events, a refused grant${runtime.missing === undefined ? "" : ` (skipped: ${runtime.missing})`}`,
    () =>
      Effect.gen(function* () {
        const { path, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const box = yield* sandbox(runtime, path)
        assert.strictEqual(box.runtime, runtime.name)
        const run = (command: object) => Effect.promise(() => box.run(command as Record<string, unknown>))

        const first = yield* run(call(grant, "inc", {}))
        assert.strictEqual(first.value?.structuredContent.count, 1, JSON.stringify(first))
        const status = yield* run({ op: "status", workerId: grant })
        assert.strictEqual(status.value?.state, "ready")
        assert.strictEqual(status.value?.workerId, grant, "a status names what the caller presented")

        const progressed = yield* run(call(grant, "progress", { steps: 3 }, { progress: true }))
        assert.deepStrictEqual(
          progressed.progress?.map((p) => p.progress),
          [1, 2, 3]
        )
        assert.strictEqual(progressed.value?.structuredContent.hadToken, true)

        // Busy: refused unsent while another call runs; then that call cancelled by its request id.
        const long = box.run(call(grant, "sleep", { ms: 20_000 }))
        yield* Effect.promise(() => eventually(() => Effect.runPromise(workers.status(id)).then((s) => s.busy), 10_000))
        const busy = yield* run(call(grant, "inc", {}))
        assert.strictEqual(busy.error?._tag, "WorkerBusy", JSON.stringify(busy))
        assert.strictEqual(busy.error?.delivery, "not_sent")
        const running = yield* run({ op: "status", workerId: grant })
        const cancelled = yield* run({ op: "cancel", workerId: grant, requestId: running.value?.requestId })
        assert.isTrue(cancelled.ok, JSON.stringify(cancelled))
        const ended = yield* Effect.promise(() => long)
        assert.strictEqual(ended.error?._tag, "DeliveryUnknown", JSON.stringify(ended))
        assert.strictEqual(ended.error?.reason, "cancelled")

        const aborted = yield* run(call(grant, "sleep", { ms: 20_000 }, { abortAfterMs: 300 }))
        assert.strictEqual(aborted.error?._tag, "DeliveryUnknown", JSON.stringify(aborted))
        assert.strictEqual(aborted.error?.reason, "interrupted")
        assert.strictEqual(aborted.error?.delivery, "unknown")
        const timedOut = yield* run(call(grant, "sleep", { ms: 20_000 }, { budgetMs: 300 }))
        assert.strictEqual(timedOut.error?._tag, "DeliveryUnknown", JSON.stringify(timedOut))
        assert.strictEqual(timedOut.error?.reason, "timeout")
        // The worker is free again: the aborted and timed-out requests were cancelled at the server.
        const after = yield* run(call(grant, "inc", {}))
        assert.strictEqual(after.value?.structuredContent.count, 2, JSON.stringify(after))

        // Events: subscribed in one step, then a notification the worker's server sends, read through the grant.
        assert.isTrue((yield* run({ op: "subscribe", workerId: grant })).ok)
        yield* run(call(grant, "notify", { methods: ["notifications/tools/list_changed"] }))
        const notified = yield* run({ op: "take", take: 1 })
        assert.deepStrictEqual(
          notified.value?.map((event: { method: string }) => event.method),
          ["notifications/tools/list_changed"],
          JSON.stringify(notified)
        )

        const forged = "mcpg_" + "A".repeat(44)
        const refused = yield* run(call(forged, "inc", {}))
        assert.strictEqual(refused.error?._tag, "UnknownWorker", JSON.stringify(refused))
        assert.strictEqual(refused.error?.delivery, "not_sent")
        assert.strictEqual(yield* Effect.promise(box.exit), 0)
      }),
    90_000
  )

  it.scopedLive.skipIf(runtime.missing !== undefined)(
    "C46, C113: a SIGKILLed host: the call in flight is DeliveryUnknown, the next HostUnavailable not_sent",
    () =>
      Effect.gen(function* () {
        const host = yield* hostProcess
        const box = yield* sandbox(runtime, host.socket)
        const first = yield* Effect.promise(() => box.run(call(host.grant, "inc", {})))
        assert.isTrue(first.ok, JSON.stringify(first))
        const inFlight = box.run(call(host.grant, "sleep", { ms: 20_000 }))
        // The sleep is written once the host was heard from: its status says busy.
        const probe = yield* Effect.promise(() => box.run({ op: "status", workerId: host.grant }))
        assert.isTrue(probe.ok)
        yield* Effect.promise(() =>
          eventually(async () => (await box.run({ op: "status", workerId: host.grant })).value?.busy === true, 10_000)
        )
        host.host.kill("SIGKILL")
        yield* Effect.promise(() => host.exited)
        const lost = yield* Effect.promise(() => inFlight)
        assert.strictEqual(lost.error?._tag, "DeliveryUnknown", JSON.stringify(lost))
        assert.strictEqual(lost.error?.reason, "connection_lost")
        const next = yield* Effect.promise(() => box.run(call(host.grant, "inc", {})))
        assert.strictEqual(next.error?._tag, "HostUnavailable", JSON.stringify(next))
        assert.strictEqual(next.error?.delivery, "not_sent")
      }),
    60_000
  )
})
