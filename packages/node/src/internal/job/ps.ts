// C100: `ps` cannot read the marker: escapees found by descent are remembered, lest the SIGTERM that ends their
// parent hide them from the SIGKILL.
import * as ChildProcess from "node:child_process"
import * as Effect from "effect/Effect"
import type { JobProcess } from "./platform.js"

// A BSD `ps` reads `-o pid=,ppid=` as one column.
/** @internal */
export const psArguments: ReadonlyArray<string> = ["-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat="]

/** @internal */
export interface PsLine {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  readonly state: string
}

/** @internal */
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

/** @internal */
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

// marker and group → pid → the group it was seen in
const remembered = new Map<string, ReadonlyMap<number, number>>()

const fromListing = (output: string, marker: string, pgid: number): Array<JobProcess> => {
  const key = `${marker}\n${pgid}`
  const found = jobOf(parsePs(output), pgid, remembered.get(key) ?? new Map(), process.pid)
  const outside = found.filter((p) => !p.inGroup)
  if (outside.length === 0) remembered.delete(key)
  else remembered.set(key, new Map(outside.map((p) => [p.pid, p.pgid])))
  return found
}

// `execFile`, not `Command`: 3–7 ms less per scan, a 7% smaller owner bundle.

const runPs = (): Promise<string | undefined> =>
  new Promise((resolve) => {
    ChildProcess.execFile("ps", psArguments, { windowsHide: true, timeout: 5000 }, (error, stdout) =>
      resolve(error ? undefined : String(stdout))
    )
  })

// A scan joins the next listing, never a running one: it sees the state after its signal.
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

/** @internal */
export const nextListing = (): Promise<string | undefined> => {
  if (running === undefined) return startListing()
  queued ??= running.then(() => {
    queued = undefined
    return startListing()
  })
  return queued
}

/** @internal */
export const scanPs = (marker: string, pgid: number | undefined): Effect.Effect<Array<JobProcess>> =>
  pgid === undefined
    ? Effect.succeed([])
    : Effect.map(Effect.promise(nextListing), (listing) =>
        listing === undefined ? [] : fromListing(listing, marker, pgid)
      )

/** @internal */
export const scanPsSync = (marker: string, pgid: number): Array<JobProcess> => {
  const result = ChildProcess.spawnSync("ps", psArguments, { encoding: "utf8", timeout: 2000, windowsHide: true })
  return result.status === 0 ? fromListing(result.stdout, marker, pgid) : []
}

/** @internal */
export const groupOfPid = (pid: number): number | undefined => {
  const result = ChildProcess.spawnSync("ps", ["-o", "pgid=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 })
  const pgid = Number(result.stdout?.trim())
  return result.status === 0 && Number.isInteger(pgid) && pgid > 0 ? pgid : undefined
}
