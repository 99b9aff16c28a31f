// C100: `MCPW_PROCESS_SCAN=posix` proves the macOS path on Linux.

/** @internal */
export type Platform = "linux" | "posix" | "win32"

/** @internal */
export const processScanVariable = "MCPW_PROCESS_SCAN" as const

/** @internal */
export const platformOf = (os: NodeJS.Platform, forced: string | undefined): Platform =>
  os === "win32" ? "win32" : os !== "linux" || forced === "posix" ? "posix" : "linux"

/** @internal */
export const platform: Platform = platformOf(process.platform, process.env[processScanVariable])

/** `marked`: outside the group. @internal */
export interface JobProcess {
  readonly pid: number
  readonly pgid: number
  readonly inGroup: boolean
  readonly marked: boolean
  /** Linux only: the start time the listing read (`StatLine`). */
  readonly startTime?: number | undefined
}
