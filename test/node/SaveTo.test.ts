// callTool's saveTo: the owner thread writes the server's raw result to a file as it arrives, and the call answers
// with the file's summary. Checked against real fixture servers, from the host and from a remote thread.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { modernConfig, startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import { eventually, structured, withHost } from "./helpers.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()
let dir = ""
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-saveto-"))
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh empty directory for one test. */
const freshDir = (name: string) => {
  const where = path.join(dir, name)
  fs.mkdirSync(where)
  return where
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex")

/** The names of the tools/call requests the fixture received, read with its `calls` tool. */
const callsReceived = (workers: McpWorkers["Type"], id: string) =>
  Effect.map(workers.callTool(id, "calls"), (result) =>
    (structured(result).calls as Array<{ name: string }>).map((call) => call.name).filter((name) => name !== "calls")
  )

describe("C32: saveTo", () => {
  it.live("a 200 MB result is written whole, far past maxResultBytes, while the host's memory stays flat", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("big")
        const target = path.join(where, "big.json")
        const bytes = 200_000_000
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: 1024 * 1024 })
        // The exact text of the result as the SDK server serializes it, hashed in pieces.
        const head = '{"content":[{"type":"text","text":"'
        const tail = '"}]}'
        const hash = createHash("sha256").update(head)
        const block = "x".repeat(1_000_000)
        for (let i = 0; i < bytes / block.length; i++) hash.update(block)
        const expected = hash.update(tail).digest("hex")

        const baseline = process.memoryUsage().rss
        let peak = baseline
        const sampler = setInterval(() => {
          peak = Math.max(peak, process.memoryUsage().rss)
        }, 20)
        const saved = yield* workers
          .callTool(id, "big", { bytes }, { saveTo: target, timeout: "120 seconds" })
          .pipe(Effect.ensuring(Effect.sync(() => clearInterval(sampler))))
        peak = Math.max(peak, process.memoryUsage().rss)

        assert.deepStrictEqual(saved, {
          path: target,
          bytes: head.length + bytes + tail.length,
          sha256: expected,
          isError: false,
          preview: "x".repeat(1024)
        })
        assert.strictEqual(fs.statSync(target).size, head.length + bytes + tail.length)
        assert.strictEqual(sha256(fs.readFileSync(target)), expected)
        // Owner threads share this process's memory: a result held whole anywhere would show here as at least its
        // 200 MB. Pieces already written are garbage, but V8 collects Buffers only once an isolate's external memory
        // passes its 64 MiB soft limit, so up to that much of them can be alive at a time (68 MB was seen).
        assert.isBelow(peak - baseline, 128 * 1024 * 1024, `the process grew by ${peak - baseline} bytes`)
        assert.deepStrictEqual(fs.readdirSync(where), ["big.json"])
        // The connection reads on: the next answer is its own.
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "after" })).token, "after")
        yield* workers.close(id)
      })
    )
  )

  it.live("a small result is the server's own bytes; the summary says isError and previews the first text", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("small")
        const id = yield* workers.open(statefulConfig())
        for (const [tool, args] of [
          ["structured", {}],
          ["echo", { token: 'é " \\ \u2603' }],
          ["fail", {}]
        ] as const) {
          const plain = yield* workers.callTool(id, tool, args)
          const target = path.join(where, `${tool}.json`)
          const saved = yield* workers.callTool(id, tool, args, { saveTo: target })
          const written = fs.readFileSync(target)
          // The host received the server's line as is without saveTo: its serialization is the server's own.
          assert.strictEqual(written.toString("utf8"), JSON.stringify(plain), tool)
          assert.strictEqual(saved.bytes, written.length)
          assert.strictEqual(saved.sha256, sha256(written))
          assert.strictEqual(saved.isError, plain.isError === true)
          const first = (plain.content as Array<{ type: string; text?: string }>).find((item) => item.type === "text")
          assert.strictEqual(saved.preview, first?.text?.slice(0, 1024) ?? null)
        }
        assert.strictEqual(
          (yield* workers.callTool(id, "fail", {}, { saveTo: path.join(where, "f2.json") })).preview,
          "failed on purpose"
        )
        // Saving again replaces the file whole.
        const again = path.join(where, "again.json")
        fs.writeFileSync(again, "old content that is longer than the new one ".repeat(100))
        const replaced = yield* workers.callTool(id, "echo", { token: "new" }, { saveTo: again })
        assert.strictEqual(fs.readFileSync(again, "utf8").length, replaced.bytes)
        assert.sameMembers(fs.readdirSync(where), [
          "structured.json",
          "echo.json",
          "fail.json",
          "f2.json",
          "again.json"
        ])
        yield* workers.close(id)
      })
    )
  )

  it.live("bad paths are InvalidInput at options.saveTo and nothing is sent", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("bad")
        const file = path.join(where, "a-file")
        fs.writeFileSync(file, "")
        const id = yield* workers.open(statefulConfig())
        const bad: Array<[unknown, string]> = [
          [42, "must be a string"],
          ["relative/out.json", "absolute"],
          ["", "absolute"],
          [where, "directory"],
          [path.join(where, "missing", "out.json"), "does not exist"],
          [path.join(file, "out.json"), "not a directory"]
        ]
        for (const [saveTo, says] of bad) {
          const error = yield* Effect.flip(
            workers.callTool(id, "echo", { token: "never" }, { saveTo: saveTo as string })
          )
          assert.strictEqual(error._tag, "InvalidInput", String(saveTo))
          const invalid = error as InvalidInput
          assert.strictEqual(invalid.where, "arguments")
          assert.strictEqual(invalid.path, "options.saveTo")
          assert.strictEqual(invalid.delivery, "not_sent")
          assert.include(invalid.message, says)
        }
        assert.deepStrictEqual(yield* callsReceived(workers, id), [])
        assert.isFalse((yield* workers.status(id)).busy)
        assert.deepStrictEqual(fs.readdirSync(where), ["a-file"])
        yield* workers.close(id)
      })
    )
  )

  it.scopedLive("HTTP workers refuse saveTo before anything is sent", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("http")),
        (server) => Effect.promise(() => server.stop())
      )
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const id = yield* workers.open({ url: server.url })
        const target = path.join(freshDir("http"), "out.json")
        const error = yield* Effect.flip(workers.callTool(id, "echo", { token: "never" }, { saveTo: target }))
        assert.strictEqual(error._tag, "InvalidInput")
        assert.strictEqual((error as InvalidInput).path, "options.saveTo")
        assert.strictEqual((error as InvalidInput).message, "saveTo is for stdio servers")
        assert.isFalse(fs.existsSync(target))
        yield* workers.close(id)
      }).pipe(withHost)
      assert.deepStrictEqual(
        (yield* Effect.promise(() => server.log())).calls.map((call) => call.name),
        []
      )
    })
  )

  it.live("a timeout, a cancel or an interruption mid-write leaves neither the file nor a temporary file", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("timeout")
        const target = path.join(where, "out.json")
        const id = yield* workers.open(statefulConfig())
        // 30 pieces of 64 KiB, one every 50 ms: the answer is still arriving when the budget ends.
        const drip = { pieces: 30, size: 65_536, everyMs: 50 }
        const partWritten = () =>
          fs.readdirSync(where).some((name) => name.endsWith(".part") && fs.statSync(path.join(where, name)).size > 0)
        const settled = () => fs.readdirSync(where).length === 0

        const call = yield* Effect.fork(
          Effect.flip(workers.callTool(id, "drip", drip, { saveTo: target, timeout: 1_000 }))
        )
        assert.isTrue(yield* Effect.promise(() => eventually(partWritten, 1_000)), "no temporary file was written")
        const error = yield* Fiber.join(call)
        assert.strictEqual(error._tag, "DeliveryUnknown")
        if (error._tag === "DeliveryUnknown") assert.strictEqual(error.reason, "timeout")
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))

        // The rest of that answer arrives and is dropped (`drained` answers after it); then a cancel and an
        // interruption, mid-write too.
        yield* workers.callTool(id, "drained")
        const cancelled = yield* Effect.fork(Effect.flip(workers.callTool(id, "drip", drip, { saveTo: target })))
        assert.isTrue(yield* Effect.promise(() => eventually(partWritten, 1_000)))
        yield* workers.cancel(id, (yield* workers.status(id)).requestId!)
        assert.strictEqual((yield* Fiber.join(cancelled))._tag, "DeliveryUnknown")
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))

        yield* workers.callTool(id, "drained")
        const interrupted = yield* Effect.fork(workers.callTool(id, "drip", drip, { saveTo: target }))
        assert.isTrue(yield* Effect.promise(() => eventually(partWritten, 1_000)))
        yield* Fiber.interrupt(interrupted)
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))

        // The worker goes on, and a whole answer is saved as usual.
        yield* workers.callTool(id, "drained")
        const saved = yield* workers.callTool(id, "drip", { ...drip, pieces: 2 }, { saveTo: target })
        assert.strictEqual(saved.bytes, fs.statSync(target).size)
        assert.strictEqual(saved.bytes, 2 * 65_536 + '{"content":[{"type":"text","text":""}]}'.length)
        assert.deepStrictEqual(fs.readdirSync(where), ["out.json"])
        yield* workers.close(id)
      })
    )
  )

  it.live("a 2026-07-28 worker's result is saved too, the last round's after an input_required round", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const where = freshDir("modern")
      const id = yield* workers.open(modernConfig("--exit-on-stdin-eof"))
      for (const tool of ["big", "ask_big"]) {
        const target = path.join(where, `${tool}.json`)
        const saved = yield* workers.callTool(id, tool, { bytes: 5_000 }, { saveTo: target })
        const written = fs.readFileSync(target)
        assert.deepStrictEqual(
          [saved.bytes, saved.sha256, saved.isError, saved.preview],
          [written.length, sha256(written), false, "x".repeat(1024)],
          tool
        )
        // The server's own result, byte for byte: a 2026-07-28 one says its resultType.
        const result = JSON.parse(written.toString("utf8"))
        assert.strictEqual(result.resultType, "complete")
        assert.deepStrictEqual(result.content, [{ type: "text", text: "x".repeat(5_000) }])
      }
      assert.sameMembers(fs.readdirSync(where), ["big.json", "ask_big.json"])
      yield* workers.close(id)
    }).pipe(
      Effect.provide(
        NodeMcpWorkers.layer({
          handlers: { elicitation: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }) }
        })
      )
    )
  )

  it.live("from a remote thread through the Promise client", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("remote")
        const id = yield* workers.open(statefulConfig())
        const plain = yield* workers.callTool(id, "big", { bytes: 5_000 })
        const outcome = yield* runInThread(entry(), { scenario: "saveTo", data: { id, dir: where } })
        assert.isTrue(outcome.ok)
        if (!outcome.ok) return
        const target = path.join(where, "remote.json")
        const written = fs.readFileSync(target)
        assert.strictEqual(written.toString("utf8"), JSON.stringify(plain))
        assert.deepStrictEqual(outcome.value.saved, {
          path: target,
          bytes: written.length,
          sha256: sha256(written),
          isError: false,
          preview: "x".repeat(1024)
        })
        assert.deepStrictEqual(outcome.value.relative, {
          tag: "InvalidInput",
          path: "options.saveTo",
          delivery: "not_sent"
        })
        // The refused call never reached the server: only the plain call and the saved one did.
        assert.deepStrictEqual(yield* callsReceived(workers, id), ["big", "big"])
        yield* workers.close(id)
      })
    )
  )
})
