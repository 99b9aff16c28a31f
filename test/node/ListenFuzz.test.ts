// Random bytes against a listener's frames (C47, C63): split anywhere, invalid UTF-8, huge numbers, deep nesting,
// duplicate keys, messages of every tag with wrong payloads. Each case ends in frames read (and refused or answered)
// or a closed connection: never another exception, a hang, or bytes held past the grantless bound.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import fc from "fast-check"
import * as fs from "node:fs"
import * as net from "node:net"
import * as Frames from "../../packages/node/src/internal/listen/frames.js"
import { statefulConfig } from "../fixtures/servers.js"
import { eventually } from "./helpers.js"
import { sandboxEntry, socketPath, startSandbox } from "./listenSandbox.js"

const entry = sandboxEntry()
const clientTags = ["Request", "Ack", "Interrupt", "Ping", "Eof"]
const requestTags = ["callTool", "callToolStreamed", "listTools", "status", "cancel", "close", "events", "open", "nope"]

/** One line's text: a message of some tag with a payload of the wrong shape, or what JSON allows and more. */
const line = (grant: string) =>
  fc.oneof(
    fc
      .record({
        _tag: fc.constantFrom(...clientTags, "Exit", "Pong", "", "__proto__"),
        id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        tag: fc.constantFrom(...requestTags),
        requestId: fc.oneof(fc.string(), fc.double()),
        payload: fc.oneof(
          fc.jsonValue({ maxDepth: 4 }),
          fc.record({ id: fc.constantFrom(grant, "mcpg_forged", ""), params: fc.oneof(fc.string(), fc.integer()) })
        ),
        headers: fc.oneof(fc.constant([]), fc.jsonValue({ maxDepth: 2 }))
      })
      .map((message) => JSON.stringify(message)),
    fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)),
    fc.constantFrom(
      '{"_tag":"Ping","_tag":"Request","tag":"status","payload":{"id":"x","id":"y"}}',
      `{"_tag":"Request","id":"1","tag":"status","payload":{"id":"${grant}"},"payload":{"id":7}}`,
      '{"_tag":"Interrupt","requestId":1e999999}',
      '{"_tag":"Ack","requestId":123456789012345678901234567890123456789}',
      "-0.0000000000000000000000000000000000001e-400",
      "[".repeat(100_000),
      '{"a":'.repeat(20_000) + "1" + "}".repeat(20_000)
    ),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("latin1"))
  )

/** A stream: lines joined by newlines (the last perhaps unfinished), with invalid UTF-8 spliced in, split anywhere. */
const stream = (grant: string) =>
  fc
    .record({
      lines: fc.array(line(grant), { minLength: 1, maxLength: 6 }),
      finished: fc.boolean(),
      invalid: fc.option(
        fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b.map((x) => x | 0x80))),
        {
          nil: undefined
        }
      ),
      cuts: fc.array(fc.nat(), { maxLength: 8 })
    })
    .map(({ cuts, finished, invalid, lines }) => {
      const text = Buffer.from(lines.join("\n") + (finished ? "\n" : ""), "latin1")
      const bytes = invalid === undefined ? text : Buffer.concat([invalid, text])
      const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
      const chunks: Array<Buffer> = []
      let from = 0
      for (const cut of [...at, bytes.length]) {
        chunks.push(bytes.subarray(from, cut))
        from = cut
      }
      return chunks
    })

describe("listener fuzz", () => {
  it("C47, C63: the decoder reads messages or refuses with a frame error, and never holds past the grantless bound", () => {
    fc.assert(
      fc.property(stream("mcpg_" + "A".repeat(44)), (chunks) => {
        const budget = Frames.makeBudget(Frames.grantlessFrameBytes * 4)
        const peer = Frames.join(budget, { pause() {}, resume() {}, close() {}, unread() {} })
        const guard = { grantlessBytes: Frames.grantlessFrameBytes, admits: () => false, budget }
        const parser = Frames.make(1024 * 1024, guard).unsafeMake()
        for (const chunk of chunks) {
          budget.reading = peer
          try {
            const messages = parser.decode(chunk) as ReadonlyArray<{ _tag: string }>
            for (const message of messages) assert.include(clientTags, message._tag)
          } catch (error) {
            assert.strictEqual((error as { _tag?: string })._tag, "RpcSerializationError", String(error))
            return
          } finally {
            budget.reading = undefined
          }
          assert.isAtMost(budget.used, Frames.grantlessFrameBytes)
        }
      }),
      { numRuns: 400 }
    )
  })

  it.scopedLive(
    "C47: every fuzzed stream on a real listener ends in answers or a closed connection; nothing leaks and a sandbox is served after",
    () =>
      Effect.gen(function* () {
        const fds = () => fs.readdirSync("/proc/self/fd").length
        const socket = socketPath()
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(NodeMcpWorkers.layerListen({ path: socket.path }), scope)
        yield* Effect.addFinalizer(() =>
          Effect.andThen(Scope.close(scope, Exit.void), () => fs.rmSync(socket.dir, { recursive: true, force: true }))
        )
        const workers = context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"]
        const grants = context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const before = fds()
        const ends = { closed: 0, answered: 0 }
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(stream(grant), async (chunks) => {
              const conn = net.createConnection(socket.path)
              conn.on("error", () => {})
              await new Promise((resolve) => conn.once("connect", resolve))
              conn.write(Frames.hello(1))
              // Ends at a Pong (everything before it was read) or at the host closing the connection.
              const ended = new Promise<"closed" | "answered">((resolve) => {
                let text = ""
                conn.on("data", (data) => {
                  text += data.toString("utf8")
                  for (const frame of text.split("\n").slice(0, -1)) {
                    const message = JSON.parse(frame) as { _tag: string }
                    assert.include(["Welcome", "Exit", "Defect", "Pong", "Chunk", "ClientProtocolError"], message._tag)
                    if (message._tag === "Pong") resolve("answered")
                  }
                  text = text.slice(text.lastIndexOf("\n") + 1)
                })
                conn.once("close", () => resolve("closed"))
              })
              for (const chunk of chunks) conn.write(chunk)
              conn.write('\n{"_tag":"Ping"}\n')
              ends[await ended]++
              conn.destroy()
            }),
            { numRuns: 40 }
          )
        )
        assert.isAbove(ends.closed, 0)
        const box = yield* Effect.acquireRelease(
          Effect.promise(() => startSandbox(entry(), socket.path)),
          (box) => Effect.sync(() => box.child.kill("SIGKILL"))
        )
        const served = yield* Effect.promise(() => box.run("status", [grant]))
        assert.isTrue(served.ok, JSON.stringify(served))
        assert.strictEqual(yield* Effect.promise(() => box.exit()), 0)
        const settled = yield* Effect.promise(() => eventually(() => fds() <= before + 3, 10_000))
        assert.isTrue(settled, `file descriptors: ${before} before, ${fds()} after`)
      }),
    180_000
  )
})
