// A failure the caller handles is the caller's: no fiber of the library logs it as "Fiber terminated with an
// unhandled error". The behaviour suite (a WorkerBusy, a DeliveryUnknown of each reason, a RequestNotPending) runs
// against each surface while the host's logger keeps every line, at every level: an Effect 3 app's logger (the
// host's own callers, a remote thread's, a socket client's) and the Promise host's `log` sink.
import { assert, describe, it } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import { makePromiseHost } from "@mcp-worker/node/PromiseHost"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as fs from "node:fs"
import { statefulConfig } from "../fixtures/servers.js"
import {
  abortedByInterruption,
  abortedByPromise,
  effectSurface,
  exerciseBehaviour,
  expectedBehaviour
} from "./behaviourSuite.js"
import { socketPath } from "./listenSandbox.js"
import { remoteEntry, runInThread } from "./remoteThread.js"

const unhandled = "Fiber terminated with an unhandled error"

const stateful = () => statefulConfig("--exit-on-stdin-eof")

/** Every log line of the program, at every level, as `level message`. */
const capturing = (lines: Array<string>) =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ cause, logLevel, message }) =>
        lines.push(
          `${logLevel.label} ${(Array.isArray(message) ? message : [message]).join(" ")}` +
            (Cause.isEmpty(cause) ? "" : ` (${Cause.pretty(cause).split("\n").slice(0, 4).join(" | ")})`)
        )
      )
    ),
    Logger.minimumLogLevel(LogLevel.All)
  )

const assertNoneUnhandled = (lines: ReadonlyArray<string>) => {
  // The capture works: the host's own lines are here.
  assert.isTrue(
    lines.some((line) => line.includes("worker opened")),
    lines.join("\n")
  )
  assert.deepStrictEqual(
    lines.filter((line) => line.includes(unhandled)),
    []
  )
}

const entry = remoteEntry()

describe("caught errors are not logged as unhandled", () => {
  it.live("an Effect 3 app's logger: the host's callers, a remote thread's, a socket client's", () => {
    const lines: Array<string> = []
    const socket = socketPath()
    return Effect.gen(function* () {
      const workers = yield* McpWorkers
      const runtime = yield* Effect.runtime<never>()
      const [own, effect, promise, effectRelayed, promiseRelayed, bySocket] = yield* Effect.all(
        Array.from({ length: 6 }, () => workers.open(stateful()))
      )
      // Each caller on workers of its own: they go at once.
      const { ownSeen, remote, socketSeen } = yield* Effect.all(
        {
          ownSeen: Effect.promise(() => exerciseBehaviour(effectSurface(workers, runtime), own)),
          remote: runInThread(entry(), {
            scenario: "behaviour",
            data: { effect, promise, effectRelayed, promiseRelayed }
          }),
          socketSeen: Effect.acquireUseRelease(
            Effect.sync(() => makePromiseClient({ connect: socket.path })),
            (mcp) => Effect.promise(() => exerciseBehaviour(mcp, bySocket)),
            (mcp) => Effect.promise(() => mcp.dispose())
          )
        },
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(ownSeen, expectedBehaviour(abortedByInterruption))
      assert.deepStrictEqual(remote.ok ? remote.value : remote.error, {
        effect: expectedBehaviour(abortedByInterruption),
        promise: expectedBehaviour(abortedByPromise),
        effectRelayed: expectedBehaviour(abortedByInterruption),
        promiseRelayed: expectedBehaviour(abortedByPromise)
      })
      assert.deepStrictEqual(socketSeen, expectedBehaviour(abortedByPromise))
    }).pipe(
      Effect.provide(
        NodeMcpWorkers.layerListen({ path: socket.path, acceptWorkerIds: true }).pipe(
          Layer.provideMerge(capturing(lines))
        )
      ),
      Effect.ensuring(Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true }))),
      Effect.andThen(() => assertNoneUnhandled(lines))
    )
  })

  it.live("the Promise host's log sink", () =>
    Effect.promise(async () => {
      const lines: Array<string> = []
      const host = await makePromiseHost({
        logLevel: "All",
        log: (line) => lines.push(`${line.level} ${line.message}`)
      })
      try {
        const seen = await exerciseBehaviour(host, await host.open(stateful()))
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByPromise))
      } finally {
        await host.dispose()
      }
      assertNoneUnhandled(lines)
    })
  )
})
