// C100, C101: the process paths other than Linux's /proc, run here. The `ps` path (macOS and other POSIX systems
// without /proc) is forced with MCPW_PROCESS_SCAN=posix, so the `ps` invocations a Mac runs end real trees: the shared
// process-job suite, and the host-level cases of processTreeSuite.ts (escapees, a dead owner thread, a host that exits
// or is SIGKILLed). Windows cannot run here: the `taskkill` invocation is run against a stand-in executable, and its
// report is read from outputs transcribed in the format Windows prints (test/fixtures/process-output/, not captured
// by this suite).
import "./forcePosixScan.js"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as ProcessJob from "@mcp-worker/node/ProcessJob"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { platformOf } from "../../packages/node/src/internal/job/platform.js"
import { jobOf, parsePs, psArguments } from "../../packages/node/src/internal/job/ps.js"
import { taskkill } from "../../packages/node/src/internal/job/scan.js"
import * as Taskkill from "../../packages/node/src/internal/job/taskkill.js"
import { eventually, isLive, settled, start, statOf } from "./processJobSuite.js"
import { processJobSuite } from "./processJobSuite.js"
import { hostCloseCases, hostDeathCases } from "./processTreeSuite.js"

const outputs = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../fixtures/process-output")
const output = (name: string) => Fs.readFileSync(Path.join(outputs, name), "utf8")

// Every `ps` this file causes — in this thread, in owner threads and owner processes, in host programs and their
// reapers — goes through a stand-in first on PATH that logs its arguments and runs the real `ps`: the last case checks
// that each was one of the invocations documented for macOS (C100).
const psLog = (() => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ps-log-"))
  const real = ChildProcess.execFileSync("sh", ["-c", "command -v ps"], { encoding: "utf8" }).trim()
  const log = Path.join(dir, "log")
  Fs.writeFileSync(Path.join(dir, "ps"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 })
  process.env.PATH = `${dir}${Path.delimiter}${process.env.PATH}`
  afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
  return () => (Fs.existsSync(log) ? Fs.readFileSync(log, "utf8").trim().split("\n") : [])
})()

processJobSuite("posix")

describe("process tree through the host (posix path)", () => {
  hostCloseCases()
  hostDeathCases("posix")
})

describe("the ps path (C100)", () => {
  it.effect("MCPW_PROCESS_SCAN=posix selects it on Linux only; elsewhere the system decides", () =>
    Effect.sync(() => {
      assert.strictEqual(platformOf("linux", undefined), "linux")
      assert.strictEqual(platformOf("linux", "proc"), "linux")
      assert.strictEqual(platformOf("linux", "posix"), "posix")
      assert.strictEqual(platformOf("darwin", undefined), "posix")
      assert.strictEqual(platformOf("freebsd", undefined), "posix")
      assert.strictEqual(platformOf("win32", "posix"), "win32")
    })
  )

  it.effect("procps reads the listing's arguments as macOS ps does: four columns, no header", () =>
    Effect.sync(() => {
      const listing = ChildProcess.execFileSync("ps", psArguments, { encoding: "utf8" })
      const lines = parsePs(listing)
      assert.strictEqual(lines.length, listing.trim().split("\n").length, "every line is a process, no header")
      const own = lines.find((line) => line.pid === process.pid)
      assert.deepStrictEqual(own && { ppid: own.ppid, pgid: own.pgid }, {
        ppid: statOf(process.pid)!.ppid,
        pgid: statOf(process.pid)!.pgid
      })
    })
  )

  it.effect("a macOS listing: the group, its descendants, remembered escapees; not zombies or recycled pids", () =>
    Effect.sync(() => {
      // 4242 leads the job's group; 4251 left it with setsid (a child of 4250) and has a child of its own; 4400 was
      // seen outside the group before its parent died; 4500 was seen in group 4500 and is now in 4501 (recycled).
      const lines = parsePs(output("ps-macos.txt"))
      assert.strictEqual(lines.length, 12)
      const found = jobOf(
        lines,
        4242,
        new Map([
          [4400, 4400],
          [4500, 4500]
        ]),
        1187
      )
      assert.deepStrictEqual(
        found.map((p) => [p.pid, p.inGroup, p.marked]).sort((a, b) => Number(a[0]) - Number(b[0])),
        [
          [4242, true, false],
          [4250, true, false],
          [4251, false, true],
          [4260, false, true],
          [4400, false, true]
        ]
      )
      // Another job of the same listing: its own group only, nothing of 4242's.
      assert.deepStrictEqual(
        jobOf(lines, 4301, new Map(), 1187).map((p) => p.pid),
        [4301]
      )
    })
  )

  it.scopedLive("an escapee seen once is still found after its parent died, and stopped", () =>
    Effect.gen(function* () {
      const job = yield* start("setsid sleep 300 & sleep 300 & wait")
      const pids = yield* settled(job, 2)
      const escapee = pids.find((pid) => statOf(pid)?.pgid !== job.pgid)!
      // Seen once outside the group: `settled`'s listing may predate the escapee's `setsid`, this one follows it.
      assert.include(yield* ProcessJob.scan(job.marker, job.pgid), escapee)
      // Its parent goes: from now on only this thread's memory of the escapee ties it to the job.
      process.kill(job.pid, "SIGKILL")
      yield* eventually(Effect.sync(() => (statOf(escapee)?.ppid !== job.pid ? true : undefined)))
      assert.include(yield* ProcessJob.scan(job.marker, job.pgid), escapee)
      const summary = yield* job.stop({ budgetMs: 2000 })
      assert.strictEqual(summary.activeProcesses, 0)
      assert.strictEqual(summary.escaped, 1)
      yield* eventually(Effect.sync(() => (pids.some(isLive) ? undefined : true)))
    })
  )
})

describe("the taskkill path (C101)", () => {
  it.effect("reads a tree ended whole: every pid, descendants first", () =>
    Effect.sync(() => {
      const report = Taskkill.parseTaskkill(output("taskkill-tree.stdout.txt"), "", 0)
      assert.deepStrictEqual(report, { terminated: [7312, 6560, 6148], failed: [], notFound: false, code: 0 })
      assert.strictEqual(Taskkill.endedCount(report), 3)
    })
  )

  it.effect("reads a root that was already gone, a partial end with its reasons, and another language", () =>
    Effect.sync(() => {
      const gone = Taskkill.parseTaskkill("", output("taskkill-not-found.stderr.txt"), 128)
      assert.deepStrictEqual(gone, { terminated: [], failed: [], notFound: true, code: 128 })
      assert.strictEqual(Taskkill.endedCount(gone), 0)

      const partial = Taskkill.parseTaskkill(
        output("taskkill-denied.stdout.txt"),
        output("taskkill-denied.stderr.txt"),
        255
      )
      assert.deepStrictEqual(partial.terminated, [7312])
      assert.deepStrictEqual(partial.failed, [
        { pid: 6560, reason: "Access is denied." },
        { pid: 6148, reason: "One or more child processes of this process were still running." }
      ])
      assert.strictEqual(Taskkill.endedCount(partial), 1)

      // German output: no line is read, the clean exit alone says the tree was ended.
      const german = Taskkill.parseTaskkill(output("taskkill-de.stdout.txt"), "", 0)
      assert.deepStrictEqual(german.terminated, [])
      assert.strictEqual(Taskkill.endedCount(german), 1)
    })
  )

  it.live("runs taskkill /T /F /PID <root> and reads what it printed and its exit code", () =>
    Effect.gen(function* () {
      // A stand-in executable named taskkill, first on PATH: it records its arguments and answers as Windows does.
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "taskkill-"))
      const args = Path.join(dir, "args")
      Fs.writeFileSync(
        Path.join(dir, "taskkill"),
        `#!/bin/sh\nprintf '%s\\n' "$@" > '${args}'\ncat '${Path.join(outputs, "taskkill-denied.stdout.txt")}'\n` +
          `cat '${Path.join(outputs, "taskkill-denied.stderr.txt")}' >&2\nexit 255\n`,
        { mode: 0o755 }
      )
      const path = process.env.PATH
      process.env.PATH = `${dir}${Path.delimiter}${path}`
      const report = yield* Taskkill.runTaskkill(6148, 2000).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            process.env.PATH = path
          })
        )
      )
      const argv = Fs.readFileSync(args, "utf8").trim().split("\n")
      Fs.rmSync(dir, { recursive: true, force: true })
      assert.deepStrictEqual(argv, ["/T", "/F", "/PID", "6148"])
      assert.deepStrictEqual(argv, [...Taskkill.taskkillArguments(6148)])
      assert.deepStrictEqual(report.terminated, [7312])
      assert.deepStrictEqual(
        report.failed.map((f) => f.pid),
        [6560, 6148]
      )
      assert.strictEqual(report.code, 255)
      // Never run for a pid that must not be signalled; a taskkill that cannot start ends nothing.
      assert.isUndefined(yield* taskkill(process.pid, 1000))
      assert.strictEqual(Taskkill.endedCount(yield* Taskkill.runTaskkill(6148, 1000)), 0)
    })
  )
})

describe("the ps invocations (C100)", () => {
  it("every ps run above used arguments macOS ps and procps both accept: the listing, or one column of one pid", () => {
    const runs = psLog()
    const listing = psArguments.join(" ")
    assert.isAbove(runs.filter((args) => args === listing).length, 0)
    assert.isTrue(
      runs.some((args) => args.startsWith("-o lstart= -p ")),
      "the reaper read a leader's start time"
    )
    for (const args of runs) assert.match(args, new RegExp(`^(${listing}|-o (lstart|pgid)= -p \\d+)$`))
  })
})
