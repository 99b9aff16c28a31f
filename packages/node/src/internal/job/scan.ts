// A failed read means "not there": a process may vanish between two reads.
import * as Fs from "node:fs"
import * as Effect from "effect/Effect"
import { type JobProcess, platform } from "./platform.js"
import * as Ps from "./ps.js"
import { markerVariable } from "./start.js"
import * as Taskkill from "./taskkill.js"

/** @internal */
export { markerVariable } from "./start.js"

/** @internal */
export { type JobProcess, type Platform, platform } from "./platform.js"

/** @internal */
export interface StatLine {
  readonly pid: number
  readonly state: string
  readonly ppid: number
  readonly pgid: number
  /** Field 22: with the pid, it names one process; a reused pid has a later one. */
  readonly startTime?: number
}

// The command name may hold spaces and parentheses.
const fieldsAfterCommand = (text: string, close: number): Array<string> =>
  text
    .slice(close + 1)
    .trim()
    .split(/\s+/)

/** @internal */
export const parseStat = (text: string): StatLine | undefined => {
  const open = text.indexOf("(")
  const close = text.lastIndexOf(")")
  if (open < 1 || close < open) return undefined
  const pid = Number(text.slice(0, open).trim())
  const fields = fieldsAfterCommand(text, close)
  if (fields.length < 3) return undefined
  const state = fields[0]!
  const ppid = Number(fields[1])
  const pgid = Number(fields[2])
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || state.length === 0) {
    return undefined
  }
  const startTime = Number(fields[19])
  return Number.isInteger(startTime) ? { pid, state, ppid, pgid, startTime } : { pid, state, ppid, pgid }
}

const closeParen = 0x29
const space = 0x20
const zero = 0x30

/** @internal */
export const groupOf = (stat: Uint8Array): number => {
  let field = 0
  let group = 0
  for (let i = stat.lastIndexOf(closeParen) + 1; i < stat.length; i++) {
    const byte = stat[i]!
    if (byte === space) {
      if (field === 3) return group
      field++
    } else if (field === 3) {
      if (byte < zero || byte > zero + 9) return -1
      group = group * 10 + byte - zero
    }
  }
  return -1
}

/** @internal */
export const parseUsage = (
  text: string
): { readonly pgid: number; readonly ticks: number; readonly pages: number } | undefined => {
  // rss is the 22nd field after the command
  const fields = fieldsAfterCommand(text, text.lastIndexOf(")"))
  if (fields.length < 22 || isDeadState(fields[0]!)) return undefined
  const pgid = Number(fields[2])
  const ticks = Number(fields[11]) + Number(fields[12])
  const pages = Number(fields[21])
  return Number.isFinite(pgid) && Number.isFinite(ticks) && Number.isFinite(pages) ? { pgid, ticks, pages } : undefined
}

/** @internal */
export const isDeadState = (state: string): boolean => state === "Z" || state === "X" || state === "x"

// `readFileSync` (fstat says 0) grew a buffer per read: most of a busy close's CPU.
let procBuffer = Buffer.allocUnsafe(16 * 1024)

/** Valid until the next read. @internal */
export const readProcFile = (file: string): Buffer | undefined => {
  let fd: number
  try {
    fd = Fs.openSync(file, "r")
  } catch {
    return undefined
  }
  try {
    let length = 0
    for (;;) {
      if (length === procBuffer.length) {
        const larger = Buffer.allocUnsafe(procBuffer.length * 2)
        procBuffer.copy(larger, 0, 0, length)
        procBuffer = larger
      }
      const read = Fs.readSync(fd, procBuffer, length, procBuffer.length - length, null)
      if (read === 0) return procBuffer.subarray(0, length)
      length += read
    }
  } catch {
    return undefined
  } finally {
    Fs.closeSync(fd)
  }
}

/** @internal */
export const readStat = (pid: number): StatLine | undefined => {
  const text = readProcFile(`/proc/${pid}/stat`)
  return text === undefined ? undefined : parseStat(text.toString("latin1"))
}

/**
 * An exiting process drops its memory, and with it the marker, before it becomes a zombie: only its start time still
 * says it is the one that was signalled. @internal
 */
export const stillExiting = (pid: number, startTime: number): boolean => {
  const stat = readStat(pid)
  return stat !== undefined && !isDeadState(stat.state) && stat.startTime === startTime
}

let lastNeedle: { readonly entry: string; readonly bytes: Buffer } | undefined
const needleOf = (entry: string): Buffer => {
  if (lastNeedle?.entry !== entry) lastNeedle = { entry, bytes: Buffer.from(entry, "utf8") }
  return lastNeedle.bytes
}

/** Whole entries only: `MCP_WORKER_JOB=abc` never matches `MCP_WORKER_JOB=abcd`. @internal */
export const environHasEntry = (environ: Buffer, entry: string): boolean => {
  const needle = needleOf(entry)
  if (needle.length === 0) return false
  // the last entry may lack its NUL
  for (let at = environ.indexOf(needle); at !== -1; at = environ.indexOf(needle, at + 1)) {
    const end = at + needle.length
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true
  }
  return false
}

/** @internal */
export const markerEntry = (marker: string): string => `${markerVariable}=${marker}`

/** @internal */
export const carriesMarker = (pid: number, marker: string): boolean => {
  if (marker.length === 0) return false
  const environ = readProcFile(`/proc/${pid}/environ`)
  return environ !== undefined && environHasEntry(environ, markerEntry(marker))
}

/** @internal */
export const scanProc = (marker: string, pgid: number | undefined): Array<JobProcess> => {
  const found: Array<JobProcess> = []
  let entries: Array<string>
  try {
    entries = Fs.readdirSync("/proc")
  } catch {
    return found
  }
  for (const name of entries) {
    const code = name.charCodeAt(0)
    if (code < 48 || code > 57) continue
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue
    const stat = readStat(pid)
    if (stat === undefined || isDeadState(stat.state)) continue
    const inGroup = pgid !== undefined && stat.pgid === pgid
    const marked = carriesMarker(pid, marker)
    if (inGroup || marked) found.push({ pid, pgid: stat.pgid, inGroup, marked, startTime: stat.startTime })
  }
  return found
}

/** @internal */
export const scanWindows = (pgid: number | undefined): Array<JobProcess> =>
  pgid !== undefined && isAlive(pgid) ? [{ pid: pgid, pgid, inGroup: true, marked: false }] : []

/** @internal */
export const scanJob = (marker: string, pgid: number | undefined): Effect.Effect<Array<JobProcess>> => {
  switch (platform) {
    case "linux":
      return Effect.sync(() => scanProc(marker, pgid))
    case "posix":
      return Ps.scanPs(marker, pgid)
    case "win32":
      return Effect.sync(() => scanWindows(pgid))
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

let ownGroup: number | undefined | null = null

/** So a wrong reference can never signal ourselves. @internal */
export const ownProcessGroup = (): number | undefined => {
  if (ownGroup === null) {
    ownGroup =
      platform === "linux" ? readStat(process.pid)?.pgid : platform === "posix" ? Ps.groupOfPid(process.pid) : undefined
  }
  return ownGroup
}

/** 0, 1 and negatives address "everyone"-style targets. @internal */
export const isSignallable = (id: number): boolean =>
  Number.isInteger(id) && id > 1 && id !== process.pid && id !== ownProcessGroup()

/** @internal */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): boolean => {
  if (platform === "win32" || !isSignallable(pgid)) return false
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** Linux re-checks the marker; on `ps` the caller's listing is that check. @internal */
export const signalMarked = (pid: number, marker: string, signal: NodeJS.Signals): boolean => {
  if (platform === "win32" || !isSignallable(pid)) return false
  if (platform === "linux") {
    const stat = readStat(pid)
    if (stat === undefined || isDeadState(stat.state) || !carriesMarker(pid, marker)) return false
  }
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}

/** @internal */
export const taskkill = (pid: number, timeoutMs: number): Effect.Effect<Taskkill.TaskkillReport | undefined> =>
  isSignallable(pid) ? Taskkill.runTaskkill(pid, timeoutMs) : Effect.succeed(undefined)

/** @internal */
export const taskkillSync = (pid: number): number =>
  isSignallable(pid) ? Taskkill.endedCount(Taskkill.runTaskkillSync(pid)) : 0
