// A grant holder that asks its busy worker again as soon as it is refused (C86): every request is refused at once,
// unsent, naming what it presented, and its connection is read at most once per rest, so what it can make the host do
// is bounded by what it has in flight; another peer's calls on another worker are served meanwhile. How much such a
// flood slows another peer's calls is a bench row (`BENCH_ROWS=flood npm run bench`): latency on a shared machine is
// too noisy to assert, while the bound below holds however slow the machine is.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as net from "node:net"
import { createInterface } from "node:readline"
import { hello, restAfterRefusalMs } from "../../packages/node/src/internal/listen/frames.js"
import { statefulConfig } from "../fixtures/servers.js"
import { listening, sandboxEntry, startSandbox } from "./listenSandbox.js"

const entry = sandboxEntry()

const floodMs = 1_000

interface Answer {
  readonly _tag: string
  readonly requestId: string
  readonly exit: { readonly _tag: string; readonly cause?: { readonly error?: Record<string, unknown> } }
}

/**
 * Keeps `inFlight` `callTool` requests on `grant` in flight for `floodMs`, each sent when one is answered; resolves
 * with every answer, once the last one came, and how long it flooded (from its first write to its last answer).
 */
const flood = (path: string, grant: string, inFlight: number) =>
  new Promise<{ readonly answers: ReadonlyArray<Answer>; readonly elapsedMs: number }>((resolve, reject) => {
    const conn = net.createConnection(path)
    conn.on("error", reject)
    conn.write(hello(1))
    const answers: Array<Answer> = []
    let sent = 0
    let started = 0
    const send = () => {
      const payload = { id: grant, params: JSON.stringify({ name: "inc", arguments: {} }) }
      conn.write(JSON.stringify({ _tag: "Request", id: String(sent++), tag: "callTool", payload, headers: [] }) + "\n")
    }
    createInterface({ input: conn }).on("line", (line) => {
      const message = JSON.parse(line) as Answer
      if (message._tag !== "Exit") return
      answers.push(message)
      if (performance.now() - started < floodMs) return send()
      if (answers.length < sent) return
      const elapsedMs = performance.now() - started
      conn.destroy()
      resolve({ answers, elapsedMs })
    })
    conn.once("connect", () => {
      started = performance.now()
      for (let i = 0; i < inFlight; i++) send()
    })
  })

describe("listener fairness", () => {
  it.scopedLive(
    "C86: a peer asking a busy worker again and again is refused at once, read at most once per rest, and another peer is served meanwhile",
    () =>
      Effect.gen(function* () {
        const { path, workers, grants } = yield* listening()
        const busy = yield* workers.open(statefulConfig())
        const other = yield* workers.open(statefulConfig())
        const flooded = yield* grants.grant(busy)
        const measured = yield* grants.grant(other)
        // The worker is busy with the host's own call for the whole flood.
        const sleeping = yield* Effect.fork(workers.callTool(busy, "sleep", { ms: 60_000 }))
        while (!(yield* workers.status(busy)).busy) yield* Effect.sleep(5)
        const box = yield* Effect.acquireRelease(
          Effect.promise(() => startSandbox(entry(), path)),
          (sandbox) => Effect.sync(() => sandbox.child.kill("SIGKILL"))
        )
        const inFlight = 16
        const [{ answers, elapsedMs }, served] = yield* Effect.promise(() =>
          Promise.all([
            flood(path, flooded, inFlight),
            (async () => {
              const tokens: Array<unknown> = []
              for (let i = 0; i < 5; i++) {
                const echoed = await box.run("callTool", [measured, "echo", { token: `m${i}` }])
                tokens.push(echoed.value?.structuredContent.token ?? echoed.error)
              }
              return tokens
            })()
          ])
        )
        assert.deepStrictEqual(served, ["m0", "m1", "m2", "m3", "m4"])
        // Each refused unsent, naming the grant it came through, never the worker id behind it (C8, C44).
        const refusals = answers.map((answer) => {
          const error = answer.exit.cause?.error
          return `${answer.exit._tag} ${error?._tag} ${error?.workerId === flooded} ${error?.delivery}`
        })
        assert.deepStrictEqual(new Set(refusals), new Set(["Failure WorkerBusy true not_sent"]))
        // A read that brought a refusal is followed by a rest: within the flood, at most one read per rest, each with
        // no more requests than were in flight.
        const bound = inFlight * (Math.floor(elapsedMs / restAfterRefusalMs) + 1)
        assert.isAtMost(answers.length, bound, `${answers.length} answers in ${elapsedMs.toFixed(0)} ms`)
        assert.isAtLeast(answers.length, inFlight)
        // One request at a time, sent as soon as the last is refused: one per rest, where a round trip alone would
        // take a fraction of it.
        const one = yield* Effect.promise(() => flood(path, flooded, 1))
        const oneBound = Math.floor(one.elapsedMs / restAfterRefusalMs) + 1
        assert.isAtMost(one.answers.length, oneBound, `${one.answers.length} answers in ${one.elapsedMs.toFixed(0)} ms`)
        console.log(
          `refused ${answers.length} of 16 in flight in ${elapsedMs.toFixed(0)} ms (at most ${bound}),`,
          `${one.answers.length} of 1 in ${one.elapsedMs.toFixed(0)} ms (at most ${oneBound})`
        )
        // The client's own calls, plain and streamed, read the refusal as the server's handler would have made it.
        const refused = yield* Effect.promise(() =>
          Promise.all([
            box.run("callTool", [flooded, "echo", { token: "p" }]),
            box.run("callTool", [flooded, "echo", { token: "s" }], { progress: true })
          ])
        )
        assert.deepStrictEqual(
          refused.map(({ error }) => [error?._tag, error?.delivery, error?.message.includes(busy)]),
          [
            ["WorkerBusy", "not_sent", false],
            ["WorkerBusy", "not_sent", false]
          ]
        )
        assert.isTrue((yield* workers.status(busy)).busy, "the worker was busy throughout")
        yield* Fiber.interrupt(sleeping)
      }),
    60_000
  )
})
