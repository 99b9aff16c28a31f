import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { CloseFailed, emptyCleanup, InvalidInput, OpenFailed } from "@mcp-worker/core/McpWorkerError"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"

interface Options {
  readonly timeout?: string
  readonly isolation?: "thread" | "process"
  readonly name?: string
}

// A surface that opens by command name: "fail" fails, "invalid" is refused, "hang" waits for `release`.
const makeSurface = (release?: Deferred.Deferred<void>) => {
  const open = new Map<string, ServerConfigInput>()
  const seen: Array<{ readonly config: ServerConfigInput; readonly options: Options | undefined }> = []
  const closed: Array<string> = []
  let next = 0
  const surface: OpenAll.Surface<Options, OpenFailed | InvalidInput, { readonly timeout?: string }, CloseFailed> = {
    open: (config, options) =>
      Effect.gen(function* () {
        seen.push({ config, options })
        const command = "command" in config ? config.command : ""
        if (command === "fail") return yield* new OpenFailed({ stage: "spawn", message: "spawn ENOENT" })
        if (command === "invalid") {
          return yield* new InvalidInput({
            where: "config",
            path: "config.args[0]",
            message: "bad",
            delivery: "not_sent"
          })
        }
        if (command === "hang" && release !== undefined) yield* Deferred.await(release)
        const id = `w${next++}` as WorkerId
        open.set(id, config)
        return id
      }),
    close: (id) =>
      Effect.gen(function* () {
        if (id === "stuck") {
          return yield* new CloseFailed({ workerId: id, message: "1 process left", cleanup: emptyCleanup })
        }
        open.delete(id)
        closed.push(id)
        return { id, state: "closed" } as unknown as WorkerStatus
      })
  }
  return { surface, open, seen, closed }
}

const document = (servers: Record<string, unknown>, format: McpConfig.Format = "cursor") =>
  Either.getOrThrow(McpConfig.read({ mcpServers: servers }, format))

describe("OpenAll", () => {
  it.effect("opens every entry; one failure leaves the others opened and fails nothing", () =>
    Effect.gen(function* () {
      const { surface, open } = makeSurface()
      const result = yield* OpenAll.openAll(
        surface,
        document({ a: { command: "ok" }, b: { command: "fail" }, c: { command: "ok" }, d: { command: "ok" } })
      )
      assert.deepStrictEqual(Object.keys(result), ["a", "b", "c", "d"])
      assert.strictEqual(result.a._tag, "Opened")
      assert.strictEqual(result.b._tag, "Failed")
      assert.strictEqual(result.b._tag === "Failed" ? result.b.error._tag : "", "OpenFailed")
      assert.deepStrictEqual(Object.keys(OpenAll.ids(result)), ["a", "c", "d"])
      assert.deepStrictEqual(Object.keys(OpenAll.failures(result)), ["b"])
      assert.strictEqual(open.size, 3)
    })
  )

  it.effect("fills references in per entry: a missing one fails that entry alone, with its path in the file", () =>
    Effect.gen(function* () {
      const { surface, seen } = makeSurface()
      const doc = document({
        a: { command: "ok", env: { TOKEN: "${env:TOKEN}" } },
        b: { command: "ok", env: { KEY: "${env:MISSING}" } }
      })
      const result = yield* OpenAll.openAll(surface, doc, { environment: { TOKEN: "t0k3n" } })
      assert.strictEqual(result.a._tag, "Opened")
      const failed = result.b
      assert.strictEqual(failed._tag, "Failed")
      if (failed._tag !== "Failed") return
      assert.strictEqual(failed.error._tag, "InvalidInput")
      assert.strictEqual((failed.error as InvalidInput).path, "mcpServers.b.env.KEY")
      assert.deepStrictEqual(
        seen.map((s) => s.config),
        [{ command: "ok", env: { TOKEN: "t0k3n" } }]
      )
    })
  )

  it.effect("an InvalidInput of open is re-rooted at the entry's path", () =>
    Effect.gen(function* () {
      const { surface } = makeSurface()
      const result = yield* OpenAll.openAll(surface, document({ "My Server": { command: "invalid" } }))
      const failed = result.my_server
      assert.strictEqual(
        failed._tag === "Failed" ? (failed.error as InvalidInput).path : "",
        'mcpServers["My Server"].args[0]'
      )
    })
  )

  it.effect("per-entry options are merged over the options of every entry; each is named by its entry (C80)", () =>
    Effect.gen(function* () {
      const { surface, seen } = makeSurface()
      yield* OpenAll.openAll(surface, document({ a: { command: "ok" }, b: { command: "ok" }, c: { command: "ok" } }), {
        open: { timeout: "5 seconds" },
        entries: { b: { isolation: "process" }, c: { name: "own" } },
        concurrency: 1
      })
      assert.deepStrictEqual(
        seen.map((s) => s.options),
        [
          { name: "a", timeout: "5 seconds" },
          { name: "b", timeout: "5 seconds", isolation: "process" },
          { name: "own", timeout: "5 seconds" }
        ]
      )
    })
  )

  it.effect("interrupted part way, it closes what it had opened", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const { surface, open, closed } = makeSurface(release)
      const fiber = yield* Effect.fork(
        OpenAll.openAll(surface, document({ a: { command: "ok" }, b: { command: "hang" }, c: { command: "ok" } }))
      )
      yield* Effect.yieldNow().pipe(Effect.repeatN(20))
      assert.strictEqual(open.size, 2)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(open.size, 0)
      assert.deepStrictEqual([...closed].sort(), ["w0", "w1"])
    })
  )

  it.effect("closeAll closes each opened id, answers per entry, and reports a close that failed", () =>
    Effect.gen(function* () {
      const { surface, open } = makeSurface()
      const opened = yield* OpenAll.openAll(
        surface,
        document({ a: { command: "ok" }, b: { command: "fail" }, c: { command: "ok" } })
      )
      const closed = yield* OpenAll.closeAll(surface, opened)
      assert.deepStrictEqual(Object.keys(closed), ["a", "c"])
      assert.isTrue(Object.values(closed).every((entry) => entry._tag === "Closed"))
      assert.strictEqual(open.size, 0)
      const mixed = yield* OpenAll.closeAll(surface, { x: "stuck", y: { _tag: "Opened", id: "w9" as WorkerId } })
      assert.strictEqual(mixed.x._tag, "Failed")
      assert.strictEqual(mixed.x._tag === "Failed" ? mixed.x.error._tag : "", "CloseFailed")
      assert.strictEqual(mixed.y._tag, "Closed")
    })
  )
})
