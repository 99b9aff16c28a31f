// McpClient on Effect 4: one connection in this thread for one scope, with the rules of a worker (busy, the budget,
// interruption as the exact cancel), Effect 4 handlers, and the server's process gone once the scope has closed.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import { statefulConfig } from "../../../test/fixtures/servers.js"
import * as McpClient from "../src/McpClient.js"
import { structured } from "./scenarios.js"

const alive = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

const inFlight = (client: McpClient.McpClient) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      const status = yield* client.status
      if (status.busy && status.requestId !== null) return status.requestId
      yield* Effect.sleep(5)
    }
    return yield* Effect.die(new Error("no request went into flight"))
  })

describe("McpClient", () => {
  it.live("one connection for one scope: busy by tag, interruption cancels, the process is gone after", () =>
    Effect.gen(function* () {
      const seen = yield* McpClient.withClient(statefulConfig("--exit-on-stdin-eof"), (client) =>
        Effect.gen(function* () {
          const tools = (yield* client.listTools()).tools.map((tool) => tool.name)
          const counts = [
            structured(yield* client.callTool("inc"))?.count,
            structured(yield* client.callTool("inc"))?.count
          ]
          const sleeping = yield* Effect.forkChild(client.callTool("sleep", { ms: 300 }))
          const holder = yield* inFlight(client)
          const busy = yield* client.callTool("echo", { token: "x" }).pipe(
            Effect.as("sent"),
            Effect.catchTag("WorkerBusy", (error) => Effect.succeed(error.requestId === holder))
          )
          yield* Fiber.join(sleeping)
          const interrupted = yield* Effect.forkChild(client.callTool("sleep", { ms: 10_000, token: "gone" }))
          yield* inFlight(client)
          yield* Fiber.interrupt(interrupted)
          const cancelled = structured(yield* client.callTool("cancelled"))?.cancelled as Array<any>
          const pid = structured(yield* client.callTool("info"))?.pid as number
          return { hasInc: tools.includes("inc"), counts, busy, reasons: cancelled.map((c) => c.reason), pid }
        })
      )
      assert.deepStrictEqual(
        { ...seen, pid: undefined },
        { hasInc: true, counts: [1, 2], busy: true, reasons: ["interrupted"], pid: undefined }
      )
      assert.isFalse(alive(seen.pid))
    })
  )

  it.live("a server that dies before initialize is OpenFailed; handlers are Effect 4 effects", () =>
    Effect.gen(function* () {
      const failed = yield* McpClient.withClient(statefulConfig("--crash-on-initialize"), () => Effect.void).pipe(
        Effect.as("opened"),
        Effect.catchTag("OpenFailed", (error) => Effect.succeed(`${error._tag} ${error.stage} ${error.exitCode}`))
      )
      assert.strictEqual(failed, "OpenFailed initialize 7")
      const answer = yield* McpClient.withClient(
        statefulConfig("--exit-on-stdin-eof"),
        (client) => Effect.map(client.callTool("ask", { kind: "roots" }), (result) => structured(result)?.answer),
        { handlers: { roots: () => Effect.succeed({ roots: [{ uri: "file:///tmp", name: "tmp" }] }) } }
      )
      assert.deepStrictEqual(answer, { roots: [{ uri: "file:///tmp", name: "tmp" }] })
    })
  )
})
