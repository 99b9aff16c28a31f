// makePromiseHost: the host registry without Effect at its edge. The behaviour suite runs against it (an aborted
// signal cancels exactly its request, and the call rejects with DeliveryUnknown{interrupted}, C66); Promise handlers answer the
// server; the registry's log lines reach the sink; dispose closes every worker with its tree.
import { assert, describe, it } from "@effect/vitest"
import { makePromiseHost } from "@mcp-worker/node/PromiseHost"
import * as Effect from "effect/Effect"
import { statefulConfig } from "../fixtures/servers.js"
import { abortedByPromise, exerciseBehaviour, expectedBehaviour } from "./behaviourSuite.js"
import { isAlive, structured } from "./helpers.js"

describe("PromiseHost", () => {
  it.live("follows the request rules of every surface; an aborted call rejects with DeliveryUnknown{interrupted}", () =>
    Effect.promise(async () => {
      const host = await makePromiseHost()
      try {
        const id = await host.open(statefulConfig("--exit-on-stdin-eof"))
        const seen = await exerciseBehaviour(host, id)
        assert.deepStrictEqual(seen, expectedBehaviour(abortedByPromise))
      } finally {
        await host.dispose()
      }
    })
  )

  it.live("Promise handlers answer the server, log lines reach the sink, dispose ends every server", () =>
    Effect.promise(async () => {
      const lines: Array<string> = []
      const host = await makePromiseHost({
        logLevel: "Info",
        log: (entry) => lines.push(`${entry.level} ${entry.message} ${String(entry.annotations.workerId ?? "")}`),
        handlers: { roots: async () => ({ roots: [{ uri: "file:///srv", name: "srv" }] }) }
      })
      const id = await host.open(statefulConfig("--exit-on-stdin-eof"))
      const answer = structured(await host.callTool(id, "ask", { kind: "roots" })).answer
      const pid = (await host.status(id)).pid!
      const events = host.events(id)
      const first = events.next()
      await new Promise((resolve) => setTimeout(resolve, 20))
      await host.callTool(id, "notify", { methods: ["notifications/tools/list_changed"] })
      const event = await first
      await events.return!()
      await host.dispose()
      assert.deepStrictEqual(answer, { roots: [{ uri: "file:///srv", name: "srv" }] })
      assert.strictEqual(event.done ? null : event.value.method, "notifications/tools/list_changed")
      assert.isTrue(lines.includes(`Info worker opened ${id}`), lines.join("\n"))
      assert.isFalse(isAlive(pid))
      const after = await host.status(id).then(
        () => "answered",
        (error: { _tag?: string }) => error._tag
      )
      assert.notStrictEqual(after, "answered")
    })
  )
})
