// C121: a budget that progress extends. One suite (`idleSuite.ts`) run against every surface that takes a request's
// options: the host service (an owner thread on both eras, an owner process), the Promise client in the host's
// thread, a remote thread (straight to the owner thread and relayed by the host), a socket peer and `McpClient`.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import { modernConfig, statefulConfig } from "../fixtures/servers.js"
import { sharedHost, withPromiseClient } from "./helpers.js"
import { effectIdleSurface, exerciseIdle, expectedIdle } from "./idleSuite.js"
import { socketPath } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const entry = remoteEntry()

// The suite mostly waits on idle budgets: the surfaces run at once, on one host (helpers.ts), each on workers of its
// own. The socket peer's listener is a host too, so it runs after them, alone.
const withSharedHost = sharedHost()

describe("C121: a request ends when its server's progress stops for idleTimeout; progress extends it", () => {
  it.live.each([
    ["an owner thread, legacy era", statefulConfig(), "thread"],
    ["an owner thread, modern era", modernConfig(), "thread"],
    ["an owner process", statefulConfig(), "process"]
  ] as const)(
    "the host service: %s",
    ([, config, isolation]) =>
      withSharedHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(config, { isolation })
          const seen = yield* Effect.promise(() => exerciseIdle(effectIdleSurface(workers.callTool), id))
          assert.deepStrictEqual(seen, expectedIdle)
          yield* workers.close(id)
        })
      ),
    { concurrent: true }
  )

  it.live(
    "the Promise client in the host's thread",
    () =>
      withSharedHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const id = yield* workers.open(statefulConfig())
          const seen = yield* withPromiseClient((mcp) => exerciseIdle(mcp, id))
          assert.deepStrictEqual(seen, expectedIdle)
          yield* workers.close(id)
        })
      ),
    { concurrent: true }
  )

  it.live(
    "a remote thread: layerRemote and the Promise client",
    () =>
      withSharedHost(
        Effect.gen(function* () {
          const workers = yield* McpWorkers
          const effect = yield* workers.open(statefulConfig())
          const promise = yield* workers.open(statefulConfig())
          const outcome = yield* runInThread(entry(), { scenario: "idle", data: { effect, promise } })
          assert.isTrue(outcome.ok, outcome.ok ? "" : String(outcome.error))
          assert.deepStrictEqual(outcome.ok ? outcome.value : null, { effect: expectedIdle, promise: expectedIdle })
          yield* workers.close(effect)
          yield* workers.close(promise)
        })
      ),
    { concurrent: true }
  )

  it.scopedLive(
    "McpClient",
    () =>
      Effect.gen(function* () {
        const client = yield* McpClient.make(statefulConfig())
        const seen = yield* Effect.promise(() =>
          exerciseIdle(
            effectIdleSurface((_, name, args, options) => client.callTool(name, args, options)),
            ""
          )
        )
        assert.deepStrictEqual(seen, expectedIdle)
      }),
    { concurrent: true }
  )

  it.scopedLive("a socket peer (layerConnect)", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true }))
      const workers = Context.get(host, McpWorkers)
      const id = yield* workers.open(statefulConfig())
      const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
      const seen = yield* Effect.promise(() => exerciseIdle(effectIdleSurface(peer.callTool), id))
      assert.deepStrictEqual(seen, expectedIdle)
      yield* workers.close(id)
    })
  )
})
