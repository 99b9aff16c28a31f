// C65: an open whose server answers initialize with more than `maxResultBytes` fails at once, naming the limit and the
// size, where it used to wait out its whole budget. Against the published server-everything, whose answer over stdio
// is 2,018 bytes: 2018 opens, 2017 fails. Every open here has a budget longer than the test's own timeout, so an open
// that waited it out fails the test.
import { assert, describe, it } from "@effect/vitest"
import type { OpenFailed } from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpClient, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { everythingHttp, everythingStdio } from "../fixtures/everything.js"
import { eventually, processesWithEnv, tag } from "./helpers.js"

const initializeAnswerBytes = 2018
const budget = "120 seconds"

const stdio = (testTag: string, maxResultBytes: number) => ({
  ...everythingStdio,
  env: { TEST_TAG: testTag },
  maxResultBytes
})

const assertNamesLimit = (error: OpenFailed, limit: number, bytes?: number) => {
  assert.strictEqual(error.stage, "initialize")
  const named = /passed maxResultBytes \((\d+) > (\d+) bytes\)/.exec(error.message)
  assert.isNotNull(named, error.message)
  assert.strictEqual(Number(named![2]), limit)
  if (bytes !== undefined) assert.strictEqual(Number(named![1]), bytes)
  else assert.isAbove(Number(named![1]), limit)
}

const noServerLeft = (testTag: string) =>
  Effect.promise(() => eventually(() => processesWithEnv("TEST_TAG", testTag).length === 0)).pipe(
    Effect.map((gone) => assert.isTrue(gone, "no server of the open is left"))
  )

describe("C65: an initialize answer past maxResultBytes fails the open at once", () => {
  for (const isolation of ["thread", "process"] as const) {
    it.live(`C65: host, ${isolation} owner, stdio: 2018 opens server-everything, 2017 fails naming both`, () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const refusedTag = tag()
        const error = yield* Effect.flip(
          workers.open(stdio(refusedTag, initializeAnswerBytes - 1), { timeout: budget, isolation })
        )
        assert.strictEqual(error._tag, "OpenFailed")
        if (error._tag === "OpenFailed") assertNamesLimit(error, initializeAnswerBytes - 1, initializeAnswerBytes)
        yield* noServerLeft(refusedTag)
        const id = yield* workers.open(stdio(tag(), initializeAnswerBytes), { timeout: budget, isolation })
        assert.strictEqual((yield* workers.status(id)).state, "ready")
        assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
      }).pipe(Effect.provide(NodeMcpWorkers.layer()))
    )
  }

  it.scopedLive("C65: host, Streamable HTTP: the limit applies to the answer's body, and fails the open at once", () =>
    Effect.gen(function* () {
      const url = yield* everythingHttp()
      const workers = yield* McpWorkers
      const error = yield* Effect.flip(
        workers.open({ url, maxResultBytes: initializeAnswerBytes - 1 }, { timeout: budget })
      )
      assert.strictEqual(error._tag, "OpenFailed")
      if (error._tag === "OpenFailed") assertNamesLimit(error, initializeAnswerBytes - 1)
      const id = yield* workers.open({ url }, { timeout: budget })
      assert.strictEqual((yield* workers.close(id)).cleanup?.activeProcesses, 0)
    }).pipe(Effect.provide(NodeMcpWorkers.layer()))
  )

  it.live("C65: McpClient, stdio: 2018 opens server-everything, 2017 fails naming both", () =>
    Effect.gen(function* () {
      const refusedTag = tag()
      const error = yield* Effect.flip(
        McpClient.withClient(stdio(refusedTag, initializeAnswerBytes - 1), (client) => client.ping(), {
          timeout: budget
        })
      )
      assert.strictEqual(error._tag, "OpenFailed")
      if (error._tag === "OpenFailed") assertNamesLimit(error, initializeAnswerBytes - 1, initializeAnswerBytes)
      yield* noServerLeft(refusedTag)
      const pinged = yield* McpClient.withClient(stdio(tag(), initializeAnswerBytes), (client) => client.ping(), {
        timeout: budget
      })
      assert.deepStrictEqual(pinged, {})
    })
  )
})
