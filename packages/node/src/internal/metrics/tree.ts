/**
 * A server tree's resident memory and CPU time, read from `/proc` in one pass over the machine's processes: each
 * process counts towards the tree whose process group it is in (a stdio server leads a group of its own).
 *
 * @internal
 */
import * as Fs from "node:fs"

/** What one tree holds. @internal */
export interface TreeUsage {
  readonly rssBytes: number
  readonly cpuSeconds: number
}

// Linux reports CPU time in clock ticks of USER_HZ, 100 on every architecture Node runs on, and memory in pages.
const ticksPerSecond = 100
const pageBytes = 4096

/** Whether this machine has a `/proc` to read. @internal */
export const available = (): boolean => process.platform === "linux" && Fs.existsSync("/proc/self/stat")

/** The fields of `/proc/<pid>/stat` a tree's usage needs, read after the command name's last `)`. */
const usageOf = (
  text: string
): { readonly pgid: number; readonly ticks: number; readonly pages: number } | undefined => {
  const fields = text
    .slice(text.lastIndexOf(")") + 1)
    .trim()
    .split(/\s+/)
  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime … rss is the 22nd.
  if (fields.length < 22 || fields[0] === "Z" || fields[0] === "X") return undefined
  const pgid = Number(fields[2])
  const ticks = Number(fields[11]) + Number(fields[12])
  const pages = Number(fields[21])
  return Number.isFinite(pgid) && Number.isFinite(ticks) && Number.isFinite(pages) ? { pgid, ticks, pages } : undefined
}

/** The usage of each process group named, from one pass over `/proc`. @internal */
export const sample = (groups: Iterable<number>): Map<number, TreeUsage> => {
  const wanted = new Set(groups)
  const found = new Map<number, { ticks: number; pages: number }>()
  if (wanted.size === 0) return new Map()
  let names: Array<string>
  try {
    names = Fs.readdirSync("/proc")
  } catch {
    return new Map()
  }
  for (const name of names) {
    const code = name.charCodeAt(0)
    if (code < 48 || code > 57) continue
    let text: string
    try {
      text = Fs.readFileSync(`/proc/${name}/stat`, "latin1")
    } catch {
      continue
    }
    const usage = usageOf(text)
    if (usage === undefined || !wanted.has(usage.pgid)) continue
    const sum = found.get(usage.pgid) ?? { ticks: 0, pages: 0 }
    found.set(usage.pgid, { ticks: sum.ticks + usage.ticks, pages: sum.pages + usage.pages })
  }
  const result = new Map<number, TreeUsage>()
  for (const [pgid, sum] of found) {
    result.set(pgid, { rssBytes: sum.pages * pageBytes, cpuSeconds: sum.ticks / ticksPerSecond })
  }
  return result
}
