// Finds the fixture server processes this benchmark run started: every server the bench spawns (through a
// worker or directly) carries `MCPW_BENCH_RUN=<run id>` in its environment, so other engineers' test servers
// running on the same machine are never counted or touched.
import * as fs from "node:fs"
import * as os from "node:os"

export const runVariable = "MCPW_BENCH_RUN"

export interface FoundProcess {
  readonly pid: number
  readonly cmdline: string
}

const readState = (pid: string): string | undefined => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const close = stat.lastIndexOf(")")
  return stat.slice(close + 2, close + 3)
}

/** Live (non-zombie) processes with `MCPW_BENCH_RUN=<runId>` whose command line runs a bundled fixture. */
export const benchProcesses = (runId: string): Array<FoundProcess> => {
  if (process.platform !== "linux") return []
  const entry = `${runVariable}=${runId}`
  const found: Array<FoundProcess> = []
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readState(pid) === "Z") continue
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
      if (!cmdline.includes("test/fixtures/dist")) continue
      if (!fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry)) continue
      found.push({ pid: Number(pid), cmdline: cmdline.trim() })
    } catch {
      // gone while we looked, or not ours to read
    }
  }
  return found
}

/** SIGKILLs what `benchProcesses` found, so a failed run still leaves nothing running. */
export const killAll = (found: ReadonlyArray<FoundProcess>): void => {
  for (const p of found) {
    try {
      process.kill(p.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
}

/** The machine, as docs/benchmarks.md describes it. */
export const machine = (): { readonly nproc: number; readonly cpu: string; readonly node: string } => {
  let cpu = "unknown"
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))
    if (match !== null) cpu = match[1]!.trim()
  } catch {
    // not Linux
  }
  return { nproc: os.availableParallelism(), cpu, node: process.version }
}
