// `npm run example:observability`, run as a process as a user runs it, with `--duration` so that it ends by itself:
// it serves its metrics on 127.0.0.1, prints the host's view of three workers under load, scrapes its own endpoint at
// the end, and leaves nothing running.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const runExample = (...args: Array<string>) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/observability/main.ts", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  }).pipe(Effect.timeout("120 seconds"), Effect.orDie)

describe("examples/observability (npm run example:observability)", () => {
  it.live(
    "runs for its --duration: a Prometheus endpoint on 127.0.0.1, the view of three workers, every one closed",
    () =>
      Effect.gen(function* () {
        const { code, stderr, stdout } = yield* runExample("--duration", "3s")
        assert.strictEqual(code, 0, stderr)
        assert.match(stdout, /^metrics: http:\/\/127\.0\.0\.1:\d+\/metrics$/m)
        const rows = stdout.split("\n").filter((line) => /^mcpw_\S+ +(counter|busy|timeouts) +ready /.test(line))
        assert.deepStrictEqual(
          new Set(rows.map((line) => line.split(/ +/)[1])),
          new Set(["counter", "busy", "timeouts"])
        )
        const summary = /^requests: result (\d+), WorkerBusy (\d+), DeliveryUnknown (\d+); closes (\d+)$/m.exec(stdout)
        assert.isNotNull(summary, stdout)
        assert.isAbove(Number(summary![1]), 0)
        assert.strictEqual(Number(summary![4]), 3)
      }),
    150_000
  )

  it.live("refuses a --duration it cannot read, before it opens anything", () =>
    Effect.gen(function* () {
      const { code, stderr, stdout } = yield* runExample("--duration", "soon")
      assert.notStrictEqual(code, 0)
      assert.include(stdout + stderr, '--duration "soon" is not a duration')
      assert.notInclude(stdout, "metrics:")
    })
  )
})
