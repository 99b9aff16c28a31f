/**
 * The process job's `ps` path: macOS and other POSIX systems without `/proc`, and Linux with
 * `MCPW_PROCESS_SCAN=posix` (C100). `ps` shows no other process's environment, so the marker cannot be read: a
 * descendant that left the group (`setsid`) is found by descent instead, as a process whose parent chain reaches
 * the group. A process keeps its parent only while that parent lives, so each descendant a scan sees outside the
 * group is remembered (in this thread, for its job) until a scan no longer sees it: the SIGTERM that ends its parent
 * must not hide it from the SIGKILL and the confirmation that follow.
 *
 * @internal
 */
import * as ChildProcess from "node:child_process"
import * as Effect from "effect/Effect"
import type { JobProcess } from "./platform.js"

/**
 * The arguments of every listing: all processes (`-A`), one `-o` per column, each with an empty header. macOS `ps`
 * and Linux procps both accept them; one `-o` per column because POSIX makes the text after `=` the rest of the
 * argument, so a BSD `ps` reads `-o pid=,ppid=` as one column headed `,ppid=`.
 *
 * @internal
 */
export const psArguments: ReadonlyArray<string> = ["-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat="]

/** One line of the listing. @internal */
export interface PsLine {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  readonly state: string
}

/** Parses a listing of `ps ${psArguments}`; a line that is not four fields with three numbers is skipped. @internal */
export const parsePs = (output: string): Array<PsLine> => {
  const lines: Array<PsLine> = []
  for (const text of output.split("\n")) {
    const [pid, ppid, pgid, state, ...rest] = text.trim().split(/\s+/)
    if (state === undefined || rest.length > 0) continue
    const line = { pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), state }
    if (Number.isInteger(line.pid) && Number.isInteger(line.ppid) && Number.isInteger(line.pgid)) lines.push(line)
  }
  return lines
}

/**
 * The live members of the job whose group is `pgid`: the group's processes, the processes `known` outside it (pid
 * to the group it was seen in; a pid now in another group was recycled), and every descendant of either. Zombies
 * (`Z`), pids 0 and 1 and `self` are never members.
 *
 * @internal
 */
export const jobOf = (
  lines: ReadonlyArray<PsLine>,
  pgid: number,
  known: ReadonlyMap<number, number>,
  self: number
): Array<JobProcess> => {
  const children = new Map<number, Array<PsLine>>()
  for (const line of lines) {
    const siblings = children.get(line.ppid)
    if (siblings === undefined) children.set(line.ppid, [line])
    else siblings.push(line)
  }
  const taken = new Map<number, PsLine>()
  const queue: Array<PsLine> = []
  const take = (line: PsLine) => {
    if (line.pid <= 1 || line.pid === self || taken.has(line.pid)) return
    taken.set(line.pid, line)
    queue.push(line)
  }
  for (const line of lines) if (line.pgid === pgid || known.get(line.pid) === line.pgid) take(line)
  for (let line = queue.pop(); line !== undefined; line = queue.pop()) {
    for (const child of children.get(line.pid) ?? []) take(child)
  }
  const found: Array<JobProcess> = []
  for (const line of taken.values()) {
    if (line.state.startsWith("Z")) continue
    const inGroup = line.pgid === pgid
    found.push({ pid: line.pid, pgid: line.pgid, inGroup, marked: !inGroup })
  }
  return found
}

// Per job (marker and group): the pids seen outside the group, with the group each was seen in.
const remembered = new Map<string, ReadonlyMap<number, number>>()

const fromListing = (output: string, marker: string, pgid: number): Array<JobProcess> => {
  const key = `${marker}\n${pgid}`
  const found = jobOf(parsePs(output), pgid, remembered.get(key) ?? new Map(), process.pid)
  const outside = found.filter((p) => !p.inGroup)
  if (outside.length === 0) remembered.delete(key)
  else remembered.set(key, new Map(outside.map((p) => [p.pid, p.pgid])))
  return found
}

// `ps` (and `taskkill`, `taskkill.ts`) run through `child_process`, not `@effect/platform` `Command`: measured on
// Linux (the same listing a Mac runs; 50 scans each, interleaved, median), `Command.string` with `NodeCommandExecutor.layer` +
// `NodeFileSystem.layer` took 3–4 ms more per scan than `execFile` (about 36 ms against 33 ms) with the layer built
// once, 5–7 ms more with the layer provided per scan, and it pulled its Stream/Sink machinery into the owner-thread
// runtime: 561,369 → 601,631 bytes (+7%), loaded by every owner thread to serve a path only non-Linux POSIX systems
// take. `Command.string` also ignores the exit code, which `execFile` reports as an error here.

const runPs = (): Promise<string | undefined> =>
  new Promise((resolve) => {
    ChildProcess.execFile("ps", psArguments, { windowsHide: true, timeout: 5000 }, (error, stdout) =>
      resolve(error ? undefined : String(stdout))
    )
  })

// Scans of this thread share listings: many jobs stopping at once would otherwise each run `ps` on every poll. A scan
// joins the listing that starts next, never one already running, so it always sees the processes as they are after
// the signal it follows.
let running: Promise<string | undefined> | undefined
let queued: Promise<string | undefined> | undefined

const startListing = (): Promise<string | undefined> => {
  const listing = runPs()
  running = listing
  void listing.then(() => {
    if (running === listing) running = undefined
  })
  return listing
}

/** A `ps` listing started after this call (`undefined` if `ps` failed). @internal */
export const nextListing = (): Promise<string | undefined> => {
  if (running === undefined) return startListing()
  queued ??= running.then(() => {
    queued = undefined
    return startListing()
  })
  return queued
}

/**
 * The job's live processes from one `ps`. A failing `ps` reports nothing (and forgets nothing).
 *
 * @internal
 */
export const scanPs = (marker: string, pgid: number | undefined): Effect.Effect<Array<JobProcess>> =>
  pgid === undefined
    ? Effect.succeed([])
    : Effect.map(Effect.promise(nextListing), (listing) =>
        listing === undefined ? [] : fromListing(listing, marker, pgid)
      )

/**
 * `scanPs` for an exit handler, where nothing asynchronous runs.
 *
 * @internal
 */
export const scanPsSync = (marker: string, pgid: number): Array<JobProcess> => {
  const result = ChildProcess.spawnSync("ps", psArguments, { encoding: "utf8", timeout: 2000, windowsHide: true })
  return result.status === 0 ? fromListing(result.stdout, marker, pgid) : []
}

/**
 * The process group of `pid` (`ps -o pgid= -p <pid>`), or `undefined` if `ps` cannot say.
 *
 * @internal
 */
export const groupOfPid = (pid: number): number | undefined => {
  const result = ChildProcess.spawnSync("ps", ["-o", "pgid=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 })
  const pgid = Number(result.stdout?.trim())
  return result.status === 0 && Number.isInteger(pgid) && pgid > 0 ? pgid : undefined
}
