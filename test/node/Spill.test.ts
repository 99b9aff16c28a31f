// The result policy (C60, C61): `onTooLarge: { spill: directory }` streams a result over maxResultBytes to a new file
// of the directory, as saveTo writes one, and answers where it is, per call and per worker; a result within the limit
// answers as usual. Checked against real fixture servers of both eras, from the host, a remote thread, the Promise
// client, an owner process, and refused over a socket.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { InvalidInput } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as ResultFile from "@mcp-worker/core/ResultFile"
import { McpClient, makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { modernConfig, startHttpFixture, statefulConfig } from "../fixtures/servers.js"
import { eventually, structured, withHost, withPromiseClient } from "./helpers.js"
import { socketPath } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

let dir = ""
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-spill-"))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A fresh empty directory for one test. */
const freshDir = (name: string) => {
  const where = path.join(dir, name)
  fs.mkdirSync(where)
  return where
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex")

/** The exact text of the fixture's `big` result of `bytes` characters, as the SDK server serializes it. */
const bigText = (bytes: number) => `{"content":[{"type":"text","text":"${"x".repeat(bytes)}"}]}`

const limit = 64 * 1024

/** The names of the tools/call requests the fixture received, read with its `calls` tool. */
const callsReceived = (workers: McpWorkers["Type"], id: string) =>
  Effect.map(workers.callTool(id, "calls"), (result) =>
    (structured(result).calls as Array<{ name: string }>).map((call) => call.name).filter((name) => name !== "calls")
  )

/**
 * Checks a spilled answer against the file it names, in `where`: the server's result of `bytes` characters, byte for
 * byte as the legacy fixture writes it (a 2026-07-28 server's carries its `resultType` and `_meta` too: `exact` false).
 */
const checkSpilled = (answer: unknown, where: string, tool: string, bytes: number, exact = true) => {
  assert.isTrue(ResultFile.isSpilled(answer), "the answer is a SpilledResult")
  const spilled = answer as ResultFile.SpilledResult
  const written = fs.readFileSync(spilled.path, "utf8")
  const text = exact ? bigText(bytes) : written
  assert.strictEqual(path.dirname(spilled.path), where)
  assert.match(path.basename(spilled.path), new RegExp(`^${tool}-req_[A-Za-z0-9_-]{16}\\.json$`))
  assert.strictEqual(written, text)
  assert.deepStrictEqual(JSON.parse(written).content, [{ type: "text", text: "x".repeat(bytes) }])
  assert.strictEqual(fs.statSync(spilled.path).mode & 0o777, 0o600)
  assert.deepStrictEqual(
    { ...spilled },
    {
      spilled: true,
      path: spilled.path,
      bytes: text.length,
      sha256: sha256(text),
      isError: false,
      preview: "x".repeat(1024),
      limit,
      content: [
        {
          type: "text",
          text:
            `The result (${text.length} bytes) passed maxResultBytes (${limit} bytes) and was saved to ` +
            `${spilled.path} (sha256 ${sha256(text)}).`
        }
      ]
    }
  )
}

describe("C60: a result over maxResultBytes spills to a new file", () => {
  it.live("a 100 MB result streams to a new 0600 file while the host's memory stays flat", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("big")
        const bytes = 100_000_000
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: 1024 * 1024 })
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
        const started = Date.now()
        const answer = yield* workers
          .callTool(id, "big", { bytes }, { onTooLarge: { spill: where }, timeout: "60 seconds" })
          .pipe(Effect.ensuring(Effect.sync(() => clearInterval(sampler))))
        const ms = Date.now() - started
        peak = Math.max(peak, process.memoryUsage().rss)

        assert.isTrue(ResultFile.isSpilled(answer))
        const spilled = answer as ResultFile.SpilledResult
        assert.deepStrictEqual(
          [spilled.bytes, spilled.sha256, spilled.limit, spilled.preview],
          [head.length + bytes + tail.length, expected, 1024 * 1024, "x".repeat(1024)]
        )
        assert.deepStrictEqual(fs.readdirSync(where), [path.basename(spilled.path)])
        assert.strictEqual(fs.statSync(spilled.path).size, head.length + bytes + tail.length)
        assert.strictEqual(fs.statSync(spilled.path).mode & 0o777, 0o600)
        assert.strictEqual(sha256(fs.readFileSync(spilled.path)), expected)
        // Owner threads share this process's memory: the result held whole anywhere would grow it by at least its own
        // 100 MB. What is seen is the 1 MiB kept before the limit was passed and pieces already written, not yet
        // collected: about 33 MiB on Node 20, about 66 MiB on Node 24, whose young generation is larger.
        const grew = peak - baseline
        assert.isBelow(grew, bytes, `the process grew by ${grew} bytes during the ${ms} ms call`)
        // The connection reads on: the next answer is its own.
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "after" })).token, "after")
        yield* workers.close(id)
        // Files are the caller's: closing the worker leaves them.
        assert.isTrue(fs.existsSync(spilled.path))
      })
    )
  )

  it.live("a worker's own spill, a call's own first (another directory, or fail); within the limit, as usual", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const own = freshDir("own")
        const other = freshDir("other")
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit }, { onTooLarge: { spill: own } })
        const small = yield* workers.callTool(id, "big", { bytes: 1_000 })
        assert.isFalse(ResultFile.isSpilled(small))
        assert.deepStrictEqual(small.content, [{ type: "text", text: "x".repeat(1_000) }])
        assert.deepStrictEqual(fs.readdirSync(own), [], "nothing is written for a result within the limit")

        checkSpilled(yield* workers.callTool(id, "big", { bytes: 100_000 }), own, "big", 100_000)
        checkSpilled(
          yield* workers.callTool(id, "big", { bytes: 200_000 }, { onTooLarge: { spill: other } }),
          other,
          "big",
          200_000
        )
        const failed = yield* Effect.flip(workers.callTool(id, "big", { bytes: 100_000 }, { onTooLarge: "fail" }))
        assert.strictEqual(failed._tag, "ResultTooLarge")
        if (failed._tag === "ResultTooLarge") {
          assert.deepStrictEqual([failed.limit, failed.delivery, failed.spillFailed], [limit, "unknown", undefined])
        }
        // saveTo has no limit: the file it names is written, and nothing spills.
        const target = path.join(other, "saved.json")
        const saved = yield* workers.callTool(id, "big", { bytes: 100_000 }, { saveTo: target })
        assert.strictEqual(saved.path, target)
        assert.isFalse(ResultFile.isSpilled(saved))
        assert.strictEqual(fs.readdirSync(own).length, 1)
        assert.strictEqual(fs.readdirSync(other).length, 2)
        // Two spills of one tool are two files.
        checkSpilled(yield* workers.callTool(id, "big", { bytes: 100_000 }), own, "big", 100_000)
        assert.strictEqual(fs.readdirSync(own).length, 2)
        // A server's result that looks like a spill is the server's result.
        assert.isFalse(
          ResultFile.isSpilled(ResultFile.answerOf(JSON.parse(JSON.stringify({ ...saved, spilled: true }))))
        )
        yield* workers.close(id)
        assert.strictEqual(fs.readdirSync(own).length, 2, "close leaves the files")
      })
    )
  )

  it.live("bad input is InvalidInput at options.onTooLarge, and nothing is sent", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("bad")
        const file = path.join(where, "a-file")
        fs.writeFileSync(file, "")
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit })
        const bad: Array<[unknown, string, string]> = [
          [42, "options.onTooLarge", '"fail" or { spill: directory }'],
          ["spill", "options.onTooLarge", '"fail" or { spill: directory }'],
          [{ spill: 42 }, "options.onTooLarge.spill", "a directory path"],
          [{}, "options.onTooLarge.spill", "a directory path"],
          [{ spill: where, into: where }, "options.onTooLarge.into", "only spill"],
          [{ spill: "relative/dir" }, "options.onTooLarge.spill", "absolute"],
          [{ spill: path.join(where, "missing") }, "options.onTooLarge.spill", "does not exist"],
          [{ spill: file }, "options.onTooLarge.spill", "not a directory"]
        ]
        for (const [onTooLarge, at, says] of bad) {
          const label = JSON.stringify(onTooLarge)
          const call = yield* Effect.flip(
            workers.callTool(id, "big", { bytes: 1 }, { onTooLarge: onTooLarge as never })
          )
          assert.deepStrictEqual(
            [call._tag, (call as InvalidInput).where, (call as InvalidInput).path, (call as InvalidInput).delivery],
            ["InvalidInput", "arguments", at, "not_sent"],
            label
          )
          assert.include(call.message, says, label)
          const open = yield* Effect.flip(workers.open(statefulConfig(), { onTooLarge: onTooLarge as never }))
          assert.deepStrictEqual(
            [open._tag, (open as InvalidInput).where, (open as InvalidInput).path],
            ["InvalidInput", "config", at],
            label
          )
        }
        assert.deepStrictEqual(yield* callsReceived(workers, id), [])
        assert.deepStrictEqual(fs.readdirSync(where), ["a-file"])
        yield* workers.close(id)
      })
    )
  )

  it.scopedLive("HTTP workers refuse a spill, per call and per worker, before anything is sent", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture("http")),
        (server) => Effect.promise(() => server.stop())
      )
      const where = freshDir("http")
      yield* Effect.gen(function* () {
        const workers = yield* McpWorkers
        const refused = yield* Effect.flip(workers.open({ url: server.url }, { onTooLarge: { spill: where } }))
        assert.deepStrictEqual(
          [refused._tag, (refused as InvalidInput).path, refused.message],
          ["InvalidInput", "options.onTooLarge.spill", "spill is for stdio servers"]
        )
        const id = yield* workers.open({ url: server.url })
        const call = yield* Effect.flip(
          workers.callTool(id, "echo", { token: "never" }, { onTooLarge: { spill: where } })
        )
        assert.deepStrictEqual(
          [call._tag, (call as InvalidInput).path, call.message],
          ["InvalidInput", "options.onTooLarge.spill", "spill is for stdio servers"]
        )
        // "fail" is what an HTTP worker does anyway.
        assert.strictEqual(
          structured(yield* workers.callTool(id, "echo", { token: "sent" }, { onTooLarge: "fail" })).token,
          "sent"
        )
        yield* workers.close(id)
      }).pipe(withHost)
      assert.deepStrictEqual(
        (yield* Effect.promise(() => server.log())).calls.map((call) => call.name),
        ["echo"]
      )
      assert.deepStrictEqual(fs.readdirSync(where), [])
    })
  )
})

describe("C61: a spill that does not complete leaves nothing, and says delivery unknown", () => {
  it.live("a timeout, a cancel, or a server that exits mid-spill: no file, no temporary file", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("broken")
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit }, { onTooLarge: { spill: where } })
        // 30 pieces of 64 KiB, one every 50 ms: past the limit with the second, still arriving when the budget ends.
        const drip = { pieces: 30, size: 65_536, everyMs: 50 }
        const partWritten = () =>
          fs.readdirSync(where).some((name) => name.endsWith(".part") && fs.statSync(path.join(where, name)).size > 0)
        const settled = () => fs.readdirSync(where).length === 0

        const timedOut = yield* Effect.fork(Effect.flip(workers.callTool(id, "drip", drip, { timeout: 1_000 })))
        assert.isTrue(yield* Effect.promise(() => eventually(partWritten, 1_000)), "no temporary file was written")
        const timeout = yield* Fiber.join(timedOut)
        assert.deepStrictEqual(
          [timeout._tag, (timeout as { delivery?: string }).delivery],
          ["DeliveryUnknown", "unknown"]
        )
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))

        // The rest of that answer arrives and is dropped (`drained` answers after it); then a cancel, mid-spill too.
        yield* workers.callTool(id, "drained")
        const cancelled = yield* Effect.fork(Effect.flip(workers.callTool(id, "drip", drip)))
        assert.isTrue(yield* Effect.promise(() => eventually(partWritten, 1_000)))
        yield* workers.cancel(id, (yield* workers.status(id)).requestId!)
        const cancel = yield* Fiber.join(cancelled)
        assert.deepStrictEqual(
          [cancel._tag, (cancel as { delivery?: string }).delivery],
          ["DeliveryUnknown", "unknown"]
        )
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))

        // A whole answer spills as usual.
        yield* workers.callTool(id, "drained")
        const whole = yield* workers.callTool(id, "drip", { ...drip, pieces: 2 })
        assert.isTrue(ResultFile.isSpilled(whole))
        assert.deepStrictEqual(fs.readdirSync(where), [path.basename((whole as ResultFile.SpilledResult).path)])
        fs.rmSync((whole as ResultFile.SpilledResult).path)

        // The server exits with the line half written: the worker fails, the call's outcome is unknown.
        const broken = yield* Effect.flip(workers.callTool(id, "drip", { ...drip, pieces: 4, exit: true }))
        assert.deepStrictEqual(
          [broken._tag, (broken as { delivery?: string }).delivery],
          ["WorkerFailed", "unknown"],
          broken.message
        )
        assert.isTrue(yield* Effect.promise(() => eventually(settled, 3_000)), fs.readdirSync(where).join(", "))
        yield* workers.close(id)
      })
    )
  )

  it.live("a spill directory gone since open: ResultTooLarge says why, and the worker goes on", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("gone")
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit }, { onTooLarge: { spill: where } })
        fs.rmSync(where, { recursive: true })
        const error = yield* Effect.flip(workers.callTool(id, "big", { bytes: 100_000 }))
        assert.strictEqual(error._tag, "ResultTooLarge")
        if (error._tag === "ResultTooLarge") {
          assert.strictEqual(error.delivery, "unknown")
          assert.include(error.spillFailed, "could not create a file next to the spill")
          assert.include(error.message, "could not be spilled")
        }
        assert.strictEqual(structured(yield* workers.callTool(id, "echo", { token: "after" })).token, "after")
        yield* workers.close(id)
      })
    )
  )
})

describe("C60 on every surface where saveTo works", () => {
  it.live("a 2026-07-28 worker spills too, the last round's result after an input_required round", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const where = freshDir("modern")
      const id = yield* workers.open(
        { ...modernConfig("--exit-on-stdin-eof"), maxResultBytes: limit },
        { onTooLarge: { spill: where } }
      )
      assert.strictEqual((yield* workers.status(id)).era, "modern")
      assert.isFalse(ResultFile.isSpilled(yield* workers.callTool(id, "big", { bytes: 1_000 })))
      checkSpilled(yield* workers.callTool(id, "big", { bytes: 100_000 }), where, "big", 100_000, false)
      checkSpilled(yield* workers.callTool(id, "ask_big", { bytes: 100_000 }), where, "ask_big", 100_000, false)
      const small = yield* workers.callTool(id, "ask_big", { bytes: 10 })
      assert.deepStrictEqual(small.content, [{ type: "text", text: "x".repeat(10) }])
      assert.strictEqual(fs.readdirSync(where).length, 2)
      yield* workers.close(id)
    }).pipe(
      Effect.provide(
        NodeMcpWorkers.layer({
          handlers: { elicitation: () => Effect.succeed({ action: "accept", content: { name: "Ada" } }) }
        })
      )
    )
  )

  it.live("from a remote thread (Effect and Promise client), relayed and straight to the owner thread", () =>
    withHost(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const where = freshDir("remote")
        const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit })
        const outcome = yield* runInThread(entry(), {
          scenario: "spill",
          data: { id, dir: where, config: { ...statefulConfig(), maxResultBytes: limit } }
        })
        assert.isTrue(outcome.ok, outcome.ok ? "" : JSON.stringify(outcome.error))
        if (!outcome.ok) return
        const seen = outcome.value
        // Each answer as the thread saw it: a SpilledResult there, whatever path the answer took.
        for (const answer of [...seen.effect, ...seen.promise, ...seen.opened]) {
          assert.isTrue(answer.isSpilled)
          checkSpilled(ResultFile.answerOf(ResultFile.encodeSpilled(answer.summary, limit)), where, "big", 100_000)
        }
        assert.strictEqual(seen.effect.length + seen.promise.length + seen.opened.length, 5)
        assert.isFalse(seen.small)
        assert.deepStrictEqual(seen.relative, ["InvalidInput", "options.onTooLarge.spill", "not_sent"])
        assert.deepStrictEqual(seen.openRelative, ["InvalidInput", "options.onTooLarge.spill", "not_sent"])
        assert.deepStrictEqual(seen.failed, ["ResultTooLarge", "unknown"])
        assert.strictEqual(fs.readdirSync(where).length, 5)
        yield* workers.close(id)
      })
    )
  )

  it.live("the Promise client in the host's thread, and an owner in a process of its own", () =>
    withHost(
      Effect.gen(function* () {
        const where = freshDir("promise")
        const seen = yield* withPromiseClient(async (mcp) => {
          const id = await mcp.open(
            { ...statefulConfig(), maxResultBytes: limit },
            { isolation: "process", onTooLarge: { spill: where } }
          )
          const status = await mcp.status(id)
          const byDefault = await mcp.callTool(id, "big", { bytes: 100_000 })
          const small = await mcp.callTool(id, "big", { bytes: 10 })
          const failed = await mcp.callTool(id, "big", { bytes: 100_000 }, { onTooLarge: "fail" }).then(
            () => null,
            (error: { _tag: string }) => error._tag
          )
          await mcp.close(id)
          const thread = await mcp.open({ ...statefulConfig(), maxResultBytes: limit })
          const perCall = await mcp.callTool(thread, "big", { bytes: 100_000 }, { onTooLarge: { spill: where } })
          await mcp.close(thread)
          return { ownerPid: status.ownerPid, byDefault, small, failed, perCall }
        })
        assert.isNumber(seen.ownerPid, "the owner ran in a process of its own")
        checkSpilled(seen.byDefault, where, "big", 100_000)
        checkSpilled(seen.perCall, where, "big", 100_000)
        assert.isFalse(ResultFile.isSpilled(seen.small))
        assert.strictEqual(seen.failed, "ResultTooLarge")
        assert.strictEqual(fs.readdirSync(where).length, 2)
      })
    )
  )

  it.live("McpClient, whose results are read in the calling thread, refuses a spill rather than ignoring it", () =>
    Effect.gen(function* () {
      const where = freshDir("client")
      const seen = yield* McpClient.withClient({ ...statefulConfig(), maxResultBytes: limit }, (client) =>
        Effect.gen(function* () {
          const refused = yield* Effect.flip(
            client.callTool("big", { bytes: 100_000 }, { onTooLarge: { spill: where } })
          )
          const failed = yield* Effect.flip(client.callTool("big", { bytes: 100_000 }, { onTooLarge: "fail" }))
          const calls = (structured(yield* client.callTool("calls")).calls as Array<{ name: string }>).map(
            (call) => call.name
          )
          return { refused, failed, calls }
        })
      )
      assert.deepStrictEqual(
        [seen.refused._tag, (seen.refused as InvalidInput).path, seen.refused.message],
        ["InvalidInput", "options.onTooLarge.spill", "spill is not available here"]
      )
      assert.strictEqual(seen.failed._tag, "ResultTooLarge")
      // The refused call was never sent; the one that failed was.
      assert.deepStrictEqual(seen.calls, ["big", "calls"])
      assert.deepStrictEqual(fs.readdirSync(where), [])
    })
  )

  it.scopedLive("refused over a socket, unsent; a worker's own spill answers socket callers too", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const context = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true }))
      const workers = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const where = freshDir("socket")
      const id = yield* workers.open({ ...statefulConfig(), maxResultBytes: limit })
      const spilling = yield* workers.open(
        { ...statefulConfig(), maxResultBytes: limit },
        { onTooLarge: { spill: where } }
      )
      const mcp = yield* Effect.acquireRelease(
        Effect.sync(() => makePromiseClient({ connect: socket.path })),
        (mcp) => Effect.promise(() => mcp.dispose())
      )
      const seen = yield* Effect.promise(async () => {
        const refusal = (error: InvalidInput) => [error._tag, error.path, error.delivery, error.message]
        const call = await mcp
          .callTool(id, "big", { bytes: 100_000 }, { onTooLarge: { spill: where } })
          .then(() => null, refusal)
        const open = await mcp.open(statefulConfig(), { onTooLarge: { spill: where } }).then(() => null, refusal)
        const byDefault = await mcp.callTool(spilling, "big", { bytes: 100_000 })
        const failed = await mcp.callTool(spilling, "big", { bytes: 100_000 }, { onTooLarge: "fail" }).then(
          () => null,
          (error: { _tag: string }) => error._tag
        )
        return { call, open, byDefault, failed }
      })
      const says = "spill writes on the listener's host: over a socket, use saveTo (under the grant's saveDir)"
      assert.deepStrictEqual(seen.call, ["InvalidInput", "options.onTooLarge.spill", "not_sent", says])
      assert.deepStrictEqual(seen.open, ["InvalidInput", "options.onTooLarge.spill", "not_sent", says])
      checkSpilled(seen.byDefault, where, "big", 100_000)
      assert.strictEqual(seen.failed, "ResultTooLarge")
      assert.deepStrictEqual(yield* callsReceived(workers, id), [])
      assert.strictEqual(fs.readdirSync(where).length, 1)
    })
  )
})
