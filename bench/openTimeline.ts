// Where one `open` spends its time, against one direct `connect`: stamps on one clock shared by every thread
// (`performance.timeOrigin + performance.now()`), taken by bench-only patches and never by the library itself.
// - host: `worker_threads.Worker` is swapped (for ESM importers too, via `syncBuiltinESMExports`) with a subclass that
//   stamps its construction, the control plane's messages each way, and starts owner threads through a bootstrap;
// - owner thread: the bootstrap patches `child_process.spawn` (the spawn, the first byte each way on the server's
//   pipes), `vm.Script` (the runtime's compile and evaluation) and `parentPort` (the runner's `ready`, the `Open`
//   request and its answer), then `require`s the real entry unchanged;
// - direct: `child_process.spawn` is patched in this thread around one `connect`.
// Stamps are offsets in ms from the host's `open` call (or the direct `connect` call).
import { createRequire, syncBuiltinESMExports } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { WorkerOptions } from "node:worker_threads"
import { closeDirect, connectDirect } from "./loops.js"
import { type Context, interleave } from "./rows.js"
import { median } from "./stats.js"

const now = () => performance.timeOrigin + performance.now()

/** Owner-side stamps, by slot in the shared buffer; the bootstrap below writes the same slots. */
const ownerMarks = [
  "entry runs",
  "server spawn called",
  "server spawn returned",
  "runtime compile start",
  "runtime compiled",
  "runtime evaluated, runner listens",
  "runner ready posted",
  "Open received",
  "first request written (discover or initialize)",
  "first response read",
  "initialize written",
  "initialize answered",
  "initialized notification written",
  "Open answered"
] as const

// Runs first in the owner thread; CommonJS, as the real entry is, so that no ES module loader starts.
const ownerBootstrap = `
const wt = require("node:worker_threads")
const t = new Float64Array(wt.workerData.benchTimeline)
const now = () => performance.timeOrigin + performance.now()
const once = (i) => { if (t[i] === 0) t[i] = now() }
once(0)
const cp = require("node:child_process")
const spawn = cp.spawn
cp.spawn = function () {
  cp.spawn = spawn
  once(1)
  const child = spawn.apply(this, arguments)
  once(2)
  let initSent = false
  const write = child.stdin.write
  child.stdin.write = function (chunk) {
    const s = String(chunk)
    once(8)
    if (s.includes('"method":"initialize"')) { once(10); initSent = true }
    if (s.includes('"notifications/initialized"')) once(12)
    return write.apply(this, arguments)
  }
  const emit = child.stdout.emit
  child.stdout.emit = function (event) {
    if (event === "data") { once(9); if (initSent) once(11) }
    return emit.apply(this, arguments)
  }
  return child
}
const vm = require("node:vm")
const Script = vm.Script
vm.Script = class extends Script {
  constructor(...args) {
    once(3)
    super(...args)
    once(4)
  }
}
const port = wt.parentPort
const on = port.on
port.on = function (type, listener) {
  if (type !== "message") return on.apply(this, arguments)
  once(5)
  return on.call(this, type, function (message) {
    if (Array.isArray(message) && message[0] === 0) once(7)
    return listener.apply(this, arguments)
  })
}
const post = port.postMessage
port.postMessage = function (message) {
  if (Array.isArray(message) && message[0] === 0) once(6)
  if (Array.isArray(message) && message[0] === 1) once(13)
  return post.apply(this, arguments)
}
require(wt.workerData.benchEntry)
`

interface HostStamps {
  threadConstruct: number
  threadConstructed: number
  readyReceived: number
  openSent: number
  openAnswerReceived: number
}

const instrumentOwnerThreads = () => {
  const threads = createRequire(import.meta.url)("node:worker_threads") as {
    Worker: typeof import("node:worker_threads").Worker
  }
  const Original = threads.Worker
  const state = { times: new Float64Array(new SharedArrayBuffer(8 * ownerMarks.length)), host: {} as HostStamps }
  class Instrumented extends Original {
    constructor(filename: string | URL, options?: WorkerOptions) {
      const href = filename instanceof URL ? filename.href : pathToFileURL(filename).href
      const owner = options?.eval !== true && href.endsWith("/owner/owner.cjs")
      if (owner) state.host.threadConstruct = now()
      const workerData = {
        ...(options?.workerData as object),
        benchTimeline: state.times.buffer,
        benchEntry: fileURLToPath(href)
      }
      super(owner ? ownerBootstrap : filename, owner ? { ...options, eval: true, workerData } : options)
      if (owner) state.host.threadConstructed = now()
    }
    override postMessage(value: unknown, transfer?: ReadonlyArray<any>) {
      if (Array.isArray(value) && value[0] === 0) state.host.openSent ||= now()
      return super.postMessage(value, transfer)
    }
    override emit(event: string | symbol, ...args: Array<any>): boolean {
      if (event === "message" && Array.isArray(args[0])) {
        if (args[0][0] === 0) state.host.readyReceived ||= now()
        if (args[0][0] === 1) state.host.openAnswerReceived ||= now()
      }
      return super.emit(event, ...args)
    }
  }
  threads.Worker = Instrumented
  syncBuiltinESMExports()
  return {
    state,
    restore: () => {
      threads.Worker = Original
      syncBuiltinESMExports()
    }
  }
}

/** Patches this thread's `child_process.spawn` around one direct `connect`. */
const instrumentDirectSpawn = () => {
  const cp = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process")
  const spawn = cp.spawn
  const stamps = { spawn: 0, spawned: 0, initializeWritten: 0, initializeAnswered: 0 }
  cp.spawn = function (this: unknown, ...args: Array<unknown>) {
    cp.spawn = spawn
    stamps.spawn = now()
    const child = (spawn as (...a: Array<unknown>) => import("node:child_process").ChildProcess).apply(this, args)
    stamps.spawned = now()
    const write = child.stdin!.write
    child.stdin!.write = function (this: unknown, chunk: unknown, ...rest: Array<unknown>) {
      if (String(chunk).includes('"method":"initialize"')) stamps.initializeWritten ||= now()
      return (write as (...a: Array<unknown>) => boolean).call(this, chunk, ...rest)
    } as typeof write
    const emit = child.stdout!.emit
    child.stdout!.emit = function (this: unknown, event: string | symbol, ...rest: Array<unknown>) {
      if (event === "data" && stamps.initializeWritten > 0) stamps.initializeAnswered ||= now()
      return (emit as (...a: Array<unknown>) => boolean).call(this, event, ...rest)
    } as typeof emit
    return child
  } as typeof cp.spawn
  syncBuiltinESMExports()
  return {
    stamps,
    restore: () => {
      cp.spawn = spawn
      syncBuiltinESMExports()
    }
  }
}

export type Timeline = Record<string, number>

const openOnce = async (ctx: Context): Promise<Timeline> => {
  const instrumented = instrumentOwnerThreads()
  const t0 = now()
  let t1: number
  let id: string
  try {
    id = await ctx.runtime.runPromise(ctx.workers.open(ctx.config))
    t1 = now()
  } finally {
    instrumented.restore()
  }
  await ctx.runtime.runPromise(ctx.workers.close(id))
  const { host, times } = instrumented.state
  const at = (x: number | undefined) => (x === undefined || x === 0 ? Number.NaN : x - t0)
  const timeline: Timeline = { "host: new Worker called": at(host.threadConstruct) }
  timeline["host: new Worker returned"] = at(host.threadConstructed)
  ownerMarks.forEach((name, i) => {
    if (i === 7) {
      timeline["host: runner ready received"] = at(host.readyReceived)
      timeline["host: Open sent"] = at(host.openSent)
    }
    timeline[`owner: ${name}`] = at(times[i])
  })
  timeline["host: Open answer received"] = at(host.openAnswerReceived)
  timeline["host: open returns"] = t1 - t0
  return timeline
}

const connectOnce = async (ctx: Context): Promise<Timeline> => {
  const instrumented = instrumentDirectSpawn()
  const t0 = now()
  let t1: number
  let direct: Awaited<ReturnType<typeof connectDirect>>
  try {
    direct = await connectDirect(ctx.server)
    t1 = now()
  } finally {
    instrumented.restore()
  }
  await closeDirect(direct)
  const s = instrumented.stamps
  return {
    "direct: spawn called": s.spawn - t0,
    "direct: spawn returned": s.spawned - t0,
    "direct: initialize written": s.initializeWritten - t0,
    "direct: initialize answered": s.initializeAnswered - t0,
    "direct: connect returns": t1 - t0
  }
}

/** Medians of each stamp over `rounds` opens and connects, alternating (one warm-up of each first). */
export const openTimeline = async (ctx: Context, rounds = 10): Promise<Timeline> => {
  ctx.progress(`open timeline: 1 warm-up round, then ${rounds} alternating rounds`)
  await openOnce(ctx)
  await connectOnce(ctx)
  const { a, b } = await interleave(
    rounds,
    () => openOnce(ctx),
    () => connectOnce(ctx)
  )
  const medians: Timeline = {}
  for (const runs of [a, b]) {
    for (const key of Object.keys(runs[0]!)) medians[key] = median(runs.map((r) => r[key]!))
  }
  return medians
}

export const renderTimeline = (timeline: Timeline): string =>
  Object.entries(timeline)
    .map(([k, v]) => `  ${k.padEnd(56)} ${Number.isNaN(v) ? "—" : v.toFixed(1).padStart(7)} ms`)
    .join("\n")
