// V8 precise coverage with call counts, in the walk's threads and processes (bundled into scripts/walk/host.mjs and
// scripts/walk/caller.mjs), through a `post` of inspector commands into the thread: a snapshot keeps each function's
// call count since the last, by its script's file and start offset.
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/** The Profiler options of every thread on the path: counts per call, not just "ran". */
export const preciseCoverage = { callCount: true, detailed: true }

/** Starts coverage in the thread `post` reaches, and the debugger `perCall` reads scripts' texts with. */
export const start = async (post) => {
  await post("Profiler.enable")
  await post("Profiler.startPreciseCoverage", preciseCoverage)
  await post("Debugger.enable")
}

/**
 * `{ functions: { [url]: { [startOffset]: [count, name] } }, scripts: { [url]: scriptId } }` of the thread's files,
 * counted since the last snapshot (`takePreciseCoverage` resets the counts it reports).
 */
export const snapshot = async (post) => {
  const { result } = await post("Profiler.takePreciseCoverage")
  const functions = {}
  const scripts = {}
  for (const script of result) {
    if (!script.url.startsWith("file:")) continue
    scripts[script.url] = script.scriptId
    const counts = (functions[script.url] ??= {})
    for (const fn of script.functions) {
      const { startOffset, count } = fn.ranges[0]
      const [before = 0] = counts[startOffset] ?? []
      counts[startOffset] = [before + count, fn.functionName]
    }
  }
  return { functions, scripts }
}

const countOf = (taken, url, offset) => taken?.functions[url]?.[offset]?.[0] ?? 0

/**
 * The functions that ran `calls` times more over the calls' window than over an idle window of the same length (a
 * timer or a ping runs in both, a step of every call only in the first), at their offsets in their files.
 */
export const perCall = async (post, window, idle, calls) => {
  const found = Object.entries(window.functions).flatMap(([url, counts]) =>
    Object.entries(counts).flatMap(([offset, [count, name]]) => {
      const delta = count - countOf(idle, url, offset)
      return delta >= calls ? [{ url, offset: Number(offset), name, delta }] : []
    })
  )
  const shifts = await shiftsOf(post, window.scripts, new Set(found.map(({ url }) => url)))
  return found.map((fn) => ({ ...fn, offset: shifts.get(fn.url) < 0 ? null : fn.offset - shifts.get(fn.url) }))
}

// Where each file's text starts in the script V8 ran: a loader may wrap it (the owner's runtime is run as a function
// body, node/internal/owner/loader.ts). -1 when the file is not in it.
const shiftsOf = async (post, scripts, urls) => {
  const shifts = new Map()
  for (const url of urls) {
    const { scriptSource } = await post("Debugger.getScriptSource", { scriptId: scripts[url] })
    shifts.set(url, scriptSource.indexOf(fs.readFileSync(fileURLToPath(url), "utf8")))
  }
  return shifts
}
