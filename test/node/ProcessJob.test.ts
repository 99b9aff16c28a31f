// The process job on Linux: the shared suite on the /proc path, and what only that path has (the marker read from
// /proc/<pid>/environ, the /proc parsers) or what does not depend on a path (spawn errors).
import { assert, describe, it } from "@effect/vitest"
import * as ProcessJob from "@mcp-worker/node/ProcessJob"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import {
  environHasEntry,
  groupOf,
  isSignallable,
  parseStat,
  parseUsage,
  readProcFile,
  readStat,
  stillExiting
} from "../../packages/node/src/internal/job/scan.js"
import {
  env,
  eventually,
  isLive,
  newMarker,
  release,
  settled,
  start,
  statOf,
  processJobSuite
} from "./processJobSuite.js"

processJobSuite("linux")

describe("ProcessJob (linux only)", () => {
  it.scopedLive("the marker matches exactly: 'abc' never matches 'abcd'", () =>
    Effect.gen(function* () {
      const base = newMarker()
      const short = yield* start("setsid sleep 300 & wait", `${base}abc`)
      const long = yield* start("setsid sleep 300 & wait", `${base}abcd`)
      const pidsShort = yield* settled(short, 1)
      const pidsLong = yield* settled(long, 1)

      const byShort = yield* ProcessJob.scan(`${base}abc`)
      assert.deepStrictEqual([...byShort].sort(), [...pidsShort].sort())
      assert.deepStrictEqual(yield* ProcessJob.scan(`${base}ab`), [])

      assert.strictEqual((yield* short.stop()).activeProcesses, 0)
      for (const pid of pidsLong) assert.isTrue(isLive(pid), `pid ${pid} with marker …abcd was touched`)
      assert.strictEqual((yield* long.stop()).activeProcesses, 0)
    })
  )

  it.scopedLive("a marker behind 100 KB of environment is still found, and its process stopped", () =>
    Effect.gen(function* () {
      const marker = newMarker()
      // /proc/<pid>/environ in the order given: the marker entry comes after the large one, past any first read.
      const job = yield* Effect.acquireRelease(
        ProcessJob.spawn({
          command: "sh",
          args: ["-c", "setsid sleep 300 & wait"],
          env: { ...env, BIG: "x".repeat(100 * 1024) },
          marker
        }),
        release
      )
      const pids = yield* settled(job, 1)
      const escaped = pids.filter((pid) => statOf(pid)?.pgid !== job.pgid)
      assert.strictEqual(escaped.length, 1, "the setsid child left the group: only its marker finds it")
      assert.include(yield* ProcessJob.scan(marker), escaped[0]!)
      const summary = yield* job.stop({ budgetMs: 2000 })
      assert.strictEqual(summary.activeProcesses, 0)
      assert.isFalse(isLive(escaped[0]!))
    })
  )

  it.scopedLive("an escapee it SIGKILLed counts until it is a zombie, though its marker goes first", () =>
    Effect.gen(function* () {
      // Freeing 400 MB takes the exiting escapee milliseconds, and /proc hides its environ for all of them.
      const job = yield* start(`setsid perl -e '$x = "x" x 4e8; sleep 300' & wait`)
      const pids = yield* settled(job, 1, "perl")
      const escapee = pids.find((pid) => statOf(pid)?.pgid !== job.pgid)!
      const residentBytes = () => Number(Fs.readFileSync(`/proc/${escapee}/statm`, "utf8").split(" ")[1]) * 4096
      yield* eventually(Effect.sync(() => (residentBytes() >= 4e8 ? true : undefined)))
      const summary = yield* job.stop({ budgetMs: 2000 })
      assert.isFalse(isLive(escapee), "stop ended while its escapee still exited")
      assert.strictEqual(summary.activeProcesses, 0)
      assert.strictEqual(summary.escaped, 1)
    })
  )

  it.effect("a process is named by its start time: the one it was, not a pid that is reused", () =>
    Effect.sync(() => {
      const stat = "4242 (a) b) R 17 4240 4240 0 -1 4194304 103 0 0 0 1 2 0 0 20 0 1 0 987654 5984256 198"
      assert.strictEqual(parseStat(stat)?.startTime, 987654)
      assert.isUndefined(parseStat("4242 (sleep) Z 17 4240 4240 0 -1 4194308 0 0")?.startTime)
      const own = readStat(process.pid)!.startTime!
      assert.isTrue(stillExiting(process.pid, own))
      assert.isFalse(stillExiting(process.pid, own + 1), "the same pid with another start time is another process")
      assert.isFalse(stillExiting(2 ** 22 + 1, own), "a pid that does not exist")
    })
  )

  it.effect("environ matching is by whole NUL-separated entry", () =>
    Effect.sync(() => {
      const environ = (...entries: Array<string>) => Buffer.from(entries.map((e) => `${e}\0`).join(""))
      assert.isTrue(environHasEntry(environ("MCP_WORKER_JOB=abc"), "MCP_WORKER_JOB=abc"))
      assert.isTrue(environHasEntry(environ("A=1", "MCP_WORKER_JOB=abc", "B=2"), "MCP_WORKER_JOB=abc"))
      assert.isTrue(environHasEntry(Buffer.from("A=1\0MCP_WORKER_JOB=abc"), "MCP_WORKER_JOB=abc"))
      assert.isFalse(environHasEntry(environ("MCP_WORKER_JOB=abcd"), "MCP_WORKER_JOB=abc"))
      assert.isFalse(environHasEntry(environ("XMCP_WORKER_JOB=abc"), "MCP_WORKER_JOB=abc"))
      assert.isFalse(environHasEntry(environ("A=MCP_WORKER_JOB=abc"), "MCP_WORKER_JOB=abc"))
      assert.isFalse(environHasEntry(Buffer.alloc(0), "MCP_WORKER_JOB=abc"))
    })
  )

  it.live("a missing binary is a typed SpawnError and leaves nothing", () =>
    Effect.gen(function* () {
      const marker = newMarker()
      const secret = "s3cr3t-env-value"
      const result = yield* Effect.either(
        ProcessJob.spawn({ command: "/nonexistent/mcp-worker-server", args: [], env: { TOKEN: secret }, marker })
      )
      assert.isTrue(Either.isLeft(result))
      const error = (result as Either.Left<ProcessJob.SpawnError, unknown>).left
      assert.strictEqual(error._tag, "SpawnError")
      assert.strictEqual(error.code, "ENOENT")
      assert.notInclude(error.message, secret)
      assert.deepStrictEqual(yield* ProcessJob.scan(marker), [])

      const badCwd = yield* Effect.flip(
        ProcessJob.spawn({ command: "sh", args: [], env, cwd: "/nonexistent/dir", marker })
      )
      assert.strictEqual(badCwd.code, "ENOENT")
      assert.deepStrictEqual(yield* ProcessJob.scan(marker), [])
    })
  )

  it.live("a non-executable file is a typed SpawnError (EACCES)", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "process-job-"))
      const file = Path.join(dir, "server")
      Fs.writeFileSync(file, "#!/bin/sh\nsleep 300\n", { mode: 0o644 })
      const marker = newMarker()
      const error = yield* Effect.flip(ProcessJob.spawn({ command: file, args: [], env, marker })).pipe(
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      )
      assert.strictEqual(error.code, "EACCES")
      assert.deepStrictEqual(yield* ProcessJob.scan(marker), [])
    })
  )

  it.effect("parses /proc/<pid>/stat after the last ')'", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(parseStat("4242 (sleep) Z 17 4240 4240 0 -1 4194308 0 0"), {
        pid: 4242,
        state: "Z",
        ppid: 17,
        pgid: 4240
      })
      assert.deepStrictEqual(parseStat("77 (a b) S) (x) R 1 77 77 0 -1"), { pid: 77, state: "R", ppid: 1, pgid: 77 })
      assert.deepStrictEqual(parseStat("9 ()) Z 3 5 5"), { pid: 9, state: "Z", ppid: 3, pgid: 5 })
      assert.isUndefined(parseStat(""))
      assert.isUndefined(parseStat("12 (truncated"))
    })
  )

  it.effect("reads a process's group, CPU ticks and resident pages from its /proc/<pid>/stat (C81)", () =>
    Effect.sync(() => {
      // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
      // threads itrealvalue starttime vsize rss
      const line = (state: string) => `31 (a) b) ${state} 1 30 30 0 -1 0 0 0 0 0 250 50 0 0 20 0 1 0 99 1000 4321 0`
      assert.deepStrictEqual(parseUsage(line("S")), { pgid: 30, ticks: 300, pages: 4321 })
      assert.isUndefined(parseUsage(line("Z")))
      assert.isUndefined(parseUsage("31 (a) S 1 30 30"))
      assert.strictEqual(groupOf(Buffer.from(line("S"), "latin1")), 30)
      assert.strictEqual(groupOf(Buffer.from("31 (a) S 1 30", "latin1")), -1)
      if (process.platform !== "linux") return
      const own = parseUsage(readProcFile(`/proc/${process.pid}/stat`)!.toString("latin1"))!
      assert.strictEqual(own.pgid, parseStat(readProcFile(`/proc/${process.pid}/stat`)!.toString("latin1"))!.pgid)
      assert.isAbove(own.pages * 4096, 1024 * 1024)
      assert.isAbove(own.ticks, 0)
      assert.strictEqual(groupOf(readProcFile(`/proc/${process.pid}/stat`)!), own.pgid)
    })
  )

  it.effect("never signals pid 0, 1, -1 or ourselves", () =>
    Effect.sync(() => {
      for (const id of [0, 1, -1, process.pid, 1.5, Number.NaN]) assert.isFalse(isSignallable(id))
      assert.isTrue(isSignallable(process.pid + 1))
    })
  )
})
