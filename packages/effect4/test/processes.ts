// What is left running: the live processes that carry a marker in their environment (a config's `env` puts it there).
import * as fs from "node:fs"

/** The pids of live processes of this user whose environment holds `marker`. */
export const carrying = (marker: string): Array<string> =>
  fs.readdirSync("/proc").filter((entry) => {
    if (!/^\d+$/.test(entry)) return false
    try {
      return fs.readFileSync(`/proc/${entry}/environ`, "utf8").includes(marker)
    } catch {
      return false
    }
  })

/** A marker no other process carries. */
export const freshMarker = (what: string): string => `MCPW_EFFECT4_${what}_${process.pid}_${Date.now()}`
