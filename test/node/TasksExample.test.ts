// examples/tasks/main.ts, run as a process exactly as a person runs it: a sandbox process by grant starts a research
// task and ends, another reads its status, a fresh thread collects the result, and nothing is left running. C70, C71.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const runExample = Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/tasks/main.ts"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  return Effect.sync(() => child.kill("SIGKILL"))
})

describe("examples/tasks", () => {
  it.live(
    "one run starts a task and ends, a sandbox by grant reads it, a fresh thread collects it",
    () =>
      Effect.gen(function* () {
        const { code, stderr, stdout } = yield* runExample
        assert.strictEqual(code, 0, stderr)
        assert.strictEqual(stderr, "")
        const lines = stdout.trim().split("\n")
        assert.deepStrictEqual(
          lines.map((line) => line.slice(0, line.indexOf(":"))),
          [
            "run 1, sandbox by grant, starts the task and ends",
            "the host, while the task runs",
            "run 2, another sandbox by the grant, reads its status",
            "run 3, a fresh thread, collects the result",
            "closed"
          ]
        )
        assert.include(lines[0], '{"taskId":"…","status":"working"}')
        // The status read depends on how long a process takes to start here: the task runs for about four seconds.
        assert.match(lines[2]!, /"status":"(working|completed)"/)
        assert.include(lines[3], '{"heading":"# Research Report: tide pools"}')
        assert.include(lines[4], '{"state":"closed","activeProcesses":0}')
      }),
    // Three programs and a server, each started from scratch: slow on a loaded machine, hence the budget.
    120_000
  )
})
