// The suites every surface runs (behaviour, operations, progress, events), run against the listener's clients: the
// Promise client with `connect` and layerConnect, by grant and by plain id (a listener that accepts them). The client
// runs in this process here; Listen.test.ts and ListenFaults.test.ts run it in sandbox processes. C43, C46.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { statefulConfig } from "../fixtures/servers.js"
import {
  abortedByInterruption,
  abortedByPromise,
  effectSurface,
  exerciseBehaviour,
  expectedBehaviour
} from "./behaviourSuite.js"
import {
  exercise,
  exerciseEvents,
  exerciseProgress,
  expected,
  expectedEvents,
  expectedProgress
} from "./operationsSuite.js"
import { listening } from "./listenSandbox.js"

const promiseClient = (path: string) =>
  Effect.acquireRelease(
    Effect.sync(() => makePromiseClient({ connect: path })),
    (mcp) => Effect.promise(() => mcp.dispose())
  )

describe("C43: the listener's clients follow every rule of the suites", () => {
  it.scopedLive("the Promise client by grant: behaviour, operations, progress, events", () =>
    Effect.gen(function* () {
      const { path, workers, grants } = yield* listening()
      const mcp = yield* promiseClient(path)
      const grantOf = (id: string) =>
        Effect.runPromise(grants.grant(id, { operations: [...McpGrants.defaultOperations, "close"] }))
      const open = () => Effect.runPromise(workers.open(statefulConfig("--exit-on-stdin-eof")))
      const seen = yield* Effect.promise(async () => ({
        behaviour: await exerciseBehaviour(mcp, await grantOf(await open())),
        operations: await exercise(mcp, await grantOf(await open())),
        progress: await exerciseProgress(mcp, await grantOf(await open())),
        events: await exerciseEvents(mcp, await grantOf(await open()))
      }))
      assert.deepStrictEqual(seen, {
        behaviour: expectedBehaviour(abortedByPromise),
        operations: expected,
        progress: expectedProgress,
        events: expectedEvents
      })
    })
  )

  it.scopedLive("layerConnect (Effect) by plain id, on a listener that accepts them; open and close through it", () =>
    Effect.gen(function* () {
      const { path } = yield* listening({ acceptWorkerIds: true })
      const context = yield* Layer.build(NodeMcpWorkers.layerConnect({ path }))
      const remote = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
      const id = yield* remote.open(statefulConfig("--exit-on-stdin-eof"))
      const seen = yield* Effect.promise(() => exerciseBehaviour(effectSurface(remote), id))
      assert.deepStrictEqual(seen, expectedBehaviour(abortedByInterruption))
      const closed = yield* remote.close(id)
      assert.strictEqual(closed.cleanup?.activeProcesses, 0)
      const after = yield* Effect.flip(remote.status(id))
      assert.strictEqual(after._tag, "UnknownWorker")
    })
  )

  it.scopedLive(
    "C44: saveTo through a grant writes only under its saveDir, checked on the host before anything is sent",
    () =>
      Effect.gen(function* () {
        const { path: socket, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "mcpl-save-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })))
        const saveDir = path.join(root, "results")
        const outside = path.join(root, "outside")
        fs.mkdirSync(saveDir)
        fs.mkdirSync(outside)
        // A link inside saveDir that leads out of it.
        fs.symlinkSync(outside, path.join(saveDir, "escape"))
        const mcp = yield* promiseClient(socket)
        const saveTo = (grant: string, target: string) =>
          Effect.promise(() =>
            mcp.callTool(grant, "echo", { token: "saved" }, { saveTo: target }).then(
              (saved) => ({ ok: true as const, bytes: saved.bytes }),
              (error: { _tag: string; path?: string; delivery?: string }) => ({
                ok: false as const,
                error: [error._tag, error.path, error.delivery]
              })
            )
          )
        const plain = yield* grants.grant(id)
        const allowed = yield* grants.grant(id, { saveDir })
        const refused = ["InvalidInput", "options.saveTo", "not_sent"]
        assert.deepStrictEqual(yield* saveTo(plain, path.join(saveDir, "a.json")), { ok: false, error: refused })
        assert.deepStrictEqual(yield* saveTo(allowed, path.join(outside, "b.json")), { ok: false, error: refused })
        assert.deepStrictEqual(yield* saveTo(allowed, path.join(saveDir, "escape", "c.json")), {
          ok: false,
          error: refused
        })
        assert.deepStrictEqual(yield* saveTo(allowed, path.join(saveDir, "..", "outside", "d.json")), {
          ok: false,
          error: refused
        })
        assert.deepStrictEqual(fs.readdirSync(outside), [], "nothing was written outside saveDir")
        const written = yield* saveTo(allowed, path.join(saveDir, "e.json"))
        assert.isTrue(written.ok)
        assert.include(fs.readFileSync(path.join(saveDir, "e.json"), "utf8"), "saved")
        // Nothing refused reached the server: the echo it ran once is the one written.
        const calls = (yield* workers.callTool(id, "calls")).structuredContent as { calls: Array<{ name: string }> }
        assert.strictEqual(calls.calls.filter((call) => call.name === "echo").length, 1)
      })
  )

  it.scopedLive("a listener of grants only refuses open, and plain ids", () =>
    Effect.gen(function* () {
      const { path, workers } = yield* listening()
      const id = yield* workers.open(statefulConfig("--exit-on-stdin-eof"))
      const mcp = yield* promiseClient(path)
      const refused = yield* Effect.promise(() =>
        mcp.open(statefulConfig()).then(
          () => "opened",
          (error: { _tag: string; message: string }) => `${error._tag}: ${error.message}`
        )
      )
      assert.match(refused, /^InvalidInput: .*grants only/)
      const plain = yield* Effect.promise(() => mcp.ping(id).catch((error: { _tag: string }) => error._tag))
      assert.strictEqual(plain, "UnknownWorker")
    })
  )
})
