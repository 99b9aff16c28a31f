// On the host's event loop: one buffer, no allocation per file.
import * as Fs from "node:fs"
import { groupOf, parseUsage, readProcFile } from "../job/scan.js"

/** @internal */
export interface TreeUsage {
  readonly rssBytes: number
  readonly cpuSeconds: number
}

// USER_HZ is 100 wherever Node runs.
const ticksPerSecond = 100
const pageBytes = 4096

/** @internal */
export const available = (): boolean => process.platform === "linux" && Fs.existsSync("/proc/self/stat")

/** @internal */
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
    const stat = readProcFile(`/proc/${name}/stat`)
    if (stat === undefined || !wanted.has(groupOf(stat))) continue
    const usage = parseUsage(stat.toString("latin1"))
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
