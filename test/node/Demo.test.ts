// `npm run demo` (examples/execute-code/main.ts), run as a process exactly as a user runs it: every snippet in a
// fresh worker_thread, one MCP connection for all of them, and nothing left running at the end. And the other
// examples that run on their own (isolation.ts, agent/main.ts), so that none of them rots.
import { assert, describe, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isAlive } from "./helpers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** Runs the demo (the owner bundle is built by the suite's globalSetup, as `npm run demo` builds it first). */
const runDemo = (script = "examples/execute-code/main.ts", timeout: Duration.DurationInput = "40 seconds") =>
  Effect.async<{ code: number | null; stdout: string; stderr: string; ms: number }>((resume) => {
    const started = Date.now()
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr, ms: Date.now() - started })))
    return Effect.sync(() => child.kill("SIGKILL"))
  }).pipe(Effect.timeout(timeout), Effect.orDie)

describe("examples/execute-code (npm run demo)", () => {
  it.live("seven runs in fresh threads share one live connection; WorkerBusy once; nothing is left running", () =>
    Effect.gen(function* () {
      const { code, ms, stderr, stdout } = yield* runDemo()
      assert.strictEqual(code, 0, stderr)
      assert.strictEqual(stderr, "")
      const headers = stdout.match(/^── run \d+ · .+ \(\d+ ms\)$/gm) ?? []
      assert.deepStrictEqual(
        headers.map((line) => Number(/run (\d+)/.exec(line)![1])),
        [1, 2, 3, 4, 5, 6, 7]
      )
      const results = stdout.split("\n").filter((line) => /^ {3}(snippet [AB] \(\d+ ms\) )?[⇒✗] /.test(line))
      assert.strictEqual(results.length, 8, stdout)

      const opened = JSON.parse(results[0]!.replace(/^.*⇒ /, "")) as { id: string; state: string; pid: number }
      assert.match(opened.id, /^mcpw_/)
      assert.strictEqual(opened.state, "ready")
      assert.includeMembers(JSON.parse(results[1]!.replace(/^.*⇒ /, "")), ["increment", "slow", "report"])
      // The counter lives in the one server process: the second fresh thread sees the first one's increment.
      assert.strictEqual(results[2], '   ⇒ {"count":1}')
      assert.strictEqual(results[3], '   ⇒ {"count":2}')

      const race = results.slice(4, 6)
      assert.strictEqual(race.filter((line) => line.includes('⇒ "waited 1200 ms"')).length, 1, stdout)
      assert.strictEqual(race.filter((line) => line.includes(`✗ WorkerBusy: worker ${opened.id} is busy`)).length, 1)
      assert.strictEqual(stdout.match(/WorkerBusy/g)?.length, 1)

      const report = JSON.parse(results[6]!.replace(/^.*⇒ /, "")) as { file: string; bytes: number; lines: number }
      assert.strictEqual(report.lines, 20000)
      assert.isAbove(report.bytes, 100_000)
      // Only the path and a summary were returned; the demo's scratch directory is gone with it.
      assert.isFalse(fs.existsSync(report.file))

      assert.strictEqual(results[7], '   ⇒ {"state":"closed","activeProcesses":0}')
      assert.isFalse(isAlive(opened.pid))
      // A guard against a demo that hangs, not a speed check (about 4 s on a quiet machine; speed is the bench's).
      assert.isBelow(ms, 30_000)
    })
  )

  it.live(
    "examples/isolation.ts: an owner process and an owner thread, saveTo and McpClient, as the README shows",
    () =>
      Effect.gen(function* () {
        const { code, stderr, stdout } = yield* runDemo("examples/isolation.ts")
        assert.strictEqual(code, 0, stderr)
        const lines = stdout.trim().split("\n")
        assert.match(lines[0]!, /^owner pid \d+, thread null: \{ count: 1 \}$/)
        assert.notInclude(lines[0]!, `owner pid ${process.pid},`)
        assert.match(lines[1]!, /^owner pid \(a thread of this process\), thread \d+: \{ count: 1 \}$/)
        assert.match(lines[2]!, /^saved \d+ bytes to .+mcp-worker-report-\d+\.json, sha256 [0-9a-f]{12}…$/)
        assert.strictEqual(lines[3], "McpClient saw tools: increment, add_note, list_notes, slow, report")
      })
  )
})

describe("examples/agent (npm run example:agent)", () => {
  it.live(
    "a config document, its tools' declarations, agent code checked against them over the binding, a spill, closeAll",
    () =>
      Effect.gen(function* () {
        // Two servers, a TypeScript program per step and a thread per run: slow on a loaded machine, hence the budget.
        const { code, stderr, stdout } = yield* runDemo("examples/agent/main.ts", "120 seconds")
        assert.strictEqual(code, 0, stderr)
        assert.strictEqual(stderr, "")
        const lines = stdout.split("\n")
        const pids = ["notes", "memory"].map((name) => {
          const opened = lines.find((line) => line.startsWith(`${name}: opened `))
          assert.match(opened ?? "", new RegExp(`^${name}: opened mcpw_\\S+, server pid \\d+, \\S+$`), stdout)
          return Number(/server pid (\d+)/.exec(opened!)![1])
        })
        assert.include(stdout, "   tools.notes.increment(args?: IncrementArgs): Promise<CallToolResult>, and 4 more")
        assert.match(
          stdout,
          /^ {3}tools\.memory\.create_entities\(args: CreateEntitiesArgs\): Promise<CreateEntitiesResult>/m
        )
        const steps = lines.filter((line) => /^ {3}[⇒✗] /.test(line))
        assert.strictEqual(steps.length, 5, stdout)
        assert.strictEqual(
          steps[0]!.replace(/ \(\d+ ms\)$/, ""),
          '   ⇒ ["mcp-worker: keeps MCP connections alive by id"]'
        )
        // The count lives in the one notes server: the second fresh thread sees the first one's increment.
        assert.match(steps[1]!, /^ {3}⇒ \{"count":1\} \(\d+ ms\)$/)
        assert.match(steps[2]!, /^ {3}⇒ \{"count":2\} \(\d+ ms\)$/)
        assert.strictEqual(
          steps[3],
          "   ✗ does not compile, not run: line 1: Property 'incremnt' does not exist on type 'Tools'. Did you mean 'increment'?"
        )
        const spilled = JSON.parse(steps[4]!.replace(/^ {3}⇒ /, "").replace(/ \(\d+ ms\)$/, ""))
        assert.strictEqual(spilled.spilled, true)
        assert.match(spilled.path, /\/spill\/report-req_[A-Za-z0-9_-]{16}\.json$/)
        assert.isAbove(spilled.bytes, 256 * 1024)
        assert.strictEqual(spilled.lines, 40_000)
        // The refused typo sent nothing: the count is still 2.
        assert.strictEqual(spilled.first, "line 1: count=2 notes=0")
        assert.includeMembers(lines, [
          "notes: closed, 0 processes left",
          "memory: closed, 0 processes left",
          "spilled files after closeAll: 1"
        ])
        for (const pid of pids) assert.isFalse(isAlive(pid))
        // The example's scratch directory, spilled file included, is gone with it.
        assert.isFalse(fs.existsSync(spilled.path))
      }),
    150_000
  )
})
