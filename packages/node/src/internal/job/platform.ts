// C100: `MCPW_PROCESS_SCAN=posix` takes the `ps` path on Linux, so the macOS path is proven where the suite runs.

/** @internal */
export type Platform = "linux" | "posix" | "win32"

/** @internal */
export const processScanVariable = "MCPW_PROCESS_SCAN" as const

/** @internal */
export const platformOf = (os: NodeJS.Platform, forced: string | undefined): Platform =>
  os === "win32" ? "win32" : os !== "linux" || forced === "posix" ? "posix" : "linux"

/** @internal */
export const platform: Platform = platformOf(process.platform, process.env[processScanVariable])

/** `marked`: outside the group, found by the marker (`/proc`) or by descent (`ps`). @internal */
export interface JobProcess {
  readonly pid: number
  readonly pgid: number
  readonly inGroup: boolean
  readonly marked: boolean
}
