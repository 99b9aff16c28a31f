// C101. Read from English output; in another language only the exit code is known.
import * as ChildProcess from "node:child_process"
import * as Effect from "effect/Effect"

/** @internal */
export const taskkillArguments = (pid: number): ReadonlyArray<string> => ["/T", "/F", "/PID", String(pid)]

/** @internal */
export interface TaskkillReport {
  /** Descendants before their parent. */
  readonly terminated: ReadonlyArray<number>
  readonly failed: ReadonlyArray<{ readonly pid: number; readonly reason: string }>
  readonly notFound: boolean
  /** `null` when it did not exit by itself. */
  readonly code: number | null
}

const success = /^SUCCESS: The process with PID (\d+)\b/
const failure = /^ERROR: The process with PID (\d+)\b.* could not be terminated\./
const reasonLine = /^Reason: (.*)$/
const notFound = /^ERROR: The process "(\d+)" not found\./

/** Either stream may hold either kind of line. @internal */
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

/** The caller checks that `pid` may be signalled. @internal */
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

/** @internal */
export const runTaskkillSync = (pid: number): TaskkillReport => {
  const result = ChildProcess.spawnSync("taskkill", taskkillArguments(pid), {
    encoding: "utf8",
    windowsHide: true,
    timeout: 2000
  })
  return parseTaskkill(result.stdout ?? "", result.stderr ?? "", result.status)
}

/** Unread lines (another language) count one. @internal */
export const endedCount = (report: TaskkillReport): number =>
  report.terminated.length > 0 ? report.terminated.length : report.code === 0 ? 1 : 0
