/**
 * Which process-tree path this process takes, decided once, here: Linux reads `/proc`, other POSIX systems ask
 * `ps` (`ps.ts`), Windows runs `taskkill` (`taskkill.ts`). `MCPW_PROCESS_SCAN=posix` selects the `ps` path on Linux
 * too, so the invocations macOS runs are proven where the suite runs (C100). Owner threads and owner processes
 * inherit the variable, and the host picks its reaper's variant by it, so all of them take the same path.
 *
 * @internal
 */

/** @internal */
export type Platform = "linux" | "posix" | "win32"

/** The environment variable that forces the `ps` path on Linux (C100). @internal */
export const processScanVariable = "MCPW_PROCESS_SCAN" as const

/** @internal */
export const platformOf = (os: NodeJS.Platform, forced: string | undefined): Platform =>
  os === "win32" ? "win32" : os !== "linux" || forced === "posix" ? "posix" : "linux"

/** @internal */
export const platform: Platform = platformOf(process.platform, process.env[processScanVariable])

/**
 * A live process that belongs to the job: in its process group, or `marked` — found outside the group by the
 * path's own evidence: the marker in its environment (`/proc`), or descent from the job (`ps`, which cannot see
 * other processes' environments).
 *
 * @internal
 */
export interface JobProcess {
  readonly pid: number
  readonly pgid: number
  readonly inGroup: boolean
  readonly marked: boolean
}
