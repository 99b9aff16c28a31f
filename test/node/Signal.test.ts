// C66: a Promise call's `signal` means the same on every Promise surface. Aborted before the call, nothing is sent and
// the call rejects with the signal's reason; aborted while its request is in flight, the request is cancelled at the
// server and the call rejects with `DeliveryUnknown{interrupted}` naming it. One suite (signalSuite.ts), run against
// the Promise host, the Promise client in the host's thread, in a remote thread and over a socket, and the scoped
// client of `PromiseClient.withClient`.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers, PromiseClient } from "@mcp-worker/node"
import { makePromiseHost } from "@mcp-worker/node/PromiseHost"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { statefulConfig } from "../fixtures/servers.js"
import { withPromiseClient } from "./helpers.js"
import { socketPath } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"
import { exerciseSignal, expectedSignal } from "./signalSuite.js"

const stateful = () => statefulConfig("--exit-on-stdin-eof")

const entry = remoteEntry()

describe("C66: a Promise call's signal means the same on every Promise surface", () => {
  it.live("C66: the Promise host", () =>
    Effect.promise(async () => {
      const host = await makePromiseHost()
      try {
        assert.deepStrictEqual(await exerciseSignal(host, await host.open(stateful())), expectedSignal())
      } finally {
        await host.dispose()
      }
    })
  )

  it.live("C66: the Promise client in the host's thread, in a remote thread, and over a socket", () => {
    const socket = socketPath()
    return Effect.gen(function* () {
      const workers = yield* McpWorkers
      const [here, there, bySocket] = yield* Effect.all(Array.from({ length: 3 }, () => workers.open(stateful())))
      const inHostThread = yield* withPromiseClient((mcp) => exerciseSignal(mcp, here))
      const remote = yield* runInThread(entry(), { scenario: "signal", data: { id: there } })
      const overSocket = yield* Effect.acquireUseRelease(
        Effect.sync(() => makePromiseClient({ connect: socket.path })),
        (mcp) => Effect.promise(() => exerciseSignal(mcp, bySocket)),
        (mcp) => Effect.promise(() => mcp.dispose())
      )
      assert.deepStrictEqual(
        { inHostThread, inRemoteThread: remote.ok ? remote.value : remote.error, overSocket },
        {
          inHostThread: expectedSignal(),
          inRemoteThread: expectedSignal(),
          overSocket: expectedSignal("no request")
        }
      )
    }).pipe(
      Effect.provide(NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true })),
      Effect.ensuring(Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
    )
  })

  it.live("C66: the scoped client of PromiseClient.withClient", () =>
    Effect.promise(async () => {
      const seen = await PromiseClient.withClient(stateful(), (client) =>
        exerciseSignal(
          {
            callTool: (_id, name, args, options) => client.callTool(name, args, options),
            cancel: (_id, requestId) => client.cancel(requestId),
            status: () => client.status()
          },
          client.workerId
        )
      )
      assert.deepStrictEqual(seen, expectedSignal())
    })
  )
})
