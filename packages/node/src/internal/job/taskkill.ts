/**
 * The process job's Windows path (C101): `taskkill /T /F /PID <root>` ends the tree Windows knows about, and its
 * report says which processes it ended and which it could not. The report is read from English output; in another
 * language only the exit code is known.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import * as Effect from "effect/Effect"

/** The arguments of `taskkill` for the tree rooted at `pid`: the tree (`/T`), forcefully (`/F`). @internal */
export const taskkillArguments = (pid: number): ReadonlyArray<string> => ["/T", "/F", "/PID", String(pid)]

/** What one `taskkill` reported. @internal */
export interface TaskkillReport {
  /** The pids it reports terminated (`SUCCESS:` lines), in its order: descendants before their parent. */
  readonly terminated: ReadonlyArray<number>
  /** The pids it could not terminate, with the reason it gave. */
  readonly failed: ReadonlyArray<{ readonly pid: number; readonly reason: string }>
  /** The root was not there (`ERROR: The process "<pid>" not found.`): nothing to end. */
  readonly notFound: boolean
  /** The exit code (`null` when it did not exit by itself). */
  readonly code: number | null
}

const success = /^SUCCESS: The process with PID (\d+)\b/
const failure = /^ERROR: The process with PID (\d+)\b.* could not be terminated\./
const reasonLine = /^Reason: (.*)$/
const notFound = /^ERROR: The process "(\d+)" not found\./

/**
 * Reads `taskkill`'s report from its stdout and stderr (either may hold either kind of line).
 *
 * @internal
 */
export const parseTaskkill = (stdout: string, stderr: string, code: number | null): TaskkillReport => {
  const terminated: Array<number> = []
  const failed: Array<{ pid: number; reason: string }> = []
  let missing = false
  const lines = `${stdout}\n${stderr}`.split(/\r?\n/).map((line) => line.trim())
  lines.forEach((line, i) => {
    const ended = success.exec(line)
    if (ended !== null) return void terminated.push(Number(ended[1]))
    const refused = failure.exec(line)
    if (refused !== null) {
      const reason = reasonLine.exec(lines[i + 1] ?? "")?.[1] ?? ""
      return void failed.push({ pid: Number(refused[1]), reason })
    }
    if (notFound.test(line)) missing = true
  })
  return { terminated, failed, notFound: missing, code }
}

/**
 * Runs `taskkill` on the tree rooted at `pid`, bounded by `timeoutMs`. The caller checks that `pid` may be signalled.
 *
 * @internal
 */
export const runTaskkill = (pid: number, timeoutMs: number): Effect.Effect<TaskkillReport> =>
  Effect.async<TaskkillReport>((resume) => {
    const child = ChildProcess.execFile(
      "taskkill",
      taskkillArguments(pid),
      { windowsHide: true, timeout: Math.max(1, timeoutMs) },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resume(Effect.succeed(parseTaskkill(String(stdout), String(stderr), code)))
      }
    )
    return Effect.sync(() => {
      child.kill()
    })
  })

/**
 * `runTaskkill` for an exit handler, where nothing asynchronous runs.
 *
 * @internal
 */
export const runTaskkillSync = (pid: number): TaskkillReport => {
  const result = ChildProcess.spawnSync("taskkill", taskkillArguments(pid), {
    encoding: "utf8",
    windowsHide: true,
    timeout: 2000
  })
  return parseTaskkill(result.stdout ?? "", result.stderr ?? "", result.status)
}

/**
 * How many processes a report says were ended: the `SUCCESS:` lines, or one for a clean exit whose lines were not
 * read (another language).
 *
 * @internal
 */
export const endedCount = (report: TaskkillReport): number =>
  report.terminated.length > 0 ? report.terminated.length : report.code === 0 ? 1 : 0
