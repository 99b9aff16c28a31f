// The gateway in front of one worker, the conformance fixture server (test/fixtures/dist/conformance.mjs), granted
// unprefixed (C141) so its tools, prompts and resources keep the names the server scenarios call. Prints one JSON line,
// `{"url"}` (the relay that presents the grant), and serves until its input ends or SIGTERM. With `--input-required`
// the fixture also serves the tools of the 2026-07-28 input-required scenarios (each needs a worker of its own, C174).
//   node --import tsx examples/conformance-gateway.ts [--input-required]
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpServe } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { layer } from "./conformance-host.js"
import { relay } from "./conformance-relay.js"

const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/dist/conformance.mjs")

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const serve = yield* McpServe.McpServe
  const args = process.argv.includes("--input-required") ? [fixture, "--input-required"] : [fixture]
  const id = yield* workers.open({ command: process.execPath, args })
  const grant = yield* serve.grant({ conformance: id }, { unprefixed: true })
  const relayed = yield* Effect.acquireRelease(
    Effect.promise(() => relay(serve.url!, grant)),
    (r) => Effect.promise(() => r.close())
  )
  process.stdout.write(`${JSON.stringify({ url: relayed.url })}\n`)
  yield* Effect.async<void>((resume) => {
    const done = () => resume(Effect.void)
    process.stdin.once("end", done).once("close", done).resume()
    process.once("SIGTERM", done)
  })
})

await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer)))
// Every worker is closed and confirmed by now; the input it read must not keep the process alive.
process.stdin.destroy()
