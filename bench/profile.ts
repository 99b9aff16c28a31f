// Profiling: where does one host-thread `callTool` spend its time? Four views of the same tiny echo, interleaved:
// - the real host path, with timestamps taken by bench-only patches of `MessagePort.prototype` (the host's
//   data-plane port: when the Request is posted, when the answer arrives, when the host's listener returns), and
//   inside the real owner thread (a bootstrap that patches the owner's port edges, then imports the real entry);
// - a replica owner thread built from the library's own `Owner.make` + stdio transport factory, timestamped at
//   its port and on the wire (bench/probeEntry.ts);
// - the SDK used directly, in the main thread and in a worker thread, timestamped on the wire;
// - a bare port round trip to an idle thread (plain Promise and `Effect.async`, as the host does it).
import * as Effect from "effect/Effect"
import { createRequire, syncBuiltinESMExports } from "node:module"
import { pathToFileURL } from "node:url"
import { MessagePort, type WorkerOptions } from "node:worker_threads"
import type { OwnerTimes, SdkSplits } from "./probeEntry.js"
import { closeDirect, connectDirect, type Direct, type StdioServer, type WireTimes } from "./loops.js"
import type { Context } from "./rows.js"
import { summarize, type Summary } from "./stats.js"
import { type BenchThread, startThread } from "./threads.js"

export interface ProfileResult {
  readonly calls: number
  /** The SDK used directly in the main thread. pre: callTool → stdin write; pipe: write → response framed. */
  readonly directMain: Record<"total" | "pre" | "pipe" | "post", Summary>
  /** The SDK used directly in a worker thread (what an owner does, without the hop). */
  readonly directThread: Record<"total" | "pre" | "pipe" | "post", Summary>
  /**
   * The real host path. pre: callTool → Request posted (validation, JSON, requestId, Effect.async); flight:
   * posted → answer arrives on the host port (hops + owner); decode: the host's listener (Schema decode,
   * JSON.parse of the result, settle); resume: listener returned → the caller's fiber has the result.
   */
  readonly host: Record<"total" | "pre" | "flight" | "decode" | "resume", Summary>
  /**
   * The flight of the real host path, split with timestamps taken inside the real owner thread: owner = the
   * request message reached the owner's port listener → the owner posted its answer; hops = flight − owner.
   * `null` when the owner entry could not be instrumented (it moved or changed shape).
   */
  readonly realOwner: Record<"owner" | "hops", Summary> | null
  /**
   * The replica owner, driven over its port from the main thread. round: post → answer (main clock); owner:
   * message in → answer posted (owner clock), split into pre (decode, JSON.parse, SDK request → stdin write),
   * pipe (write → response framed) and post (SDK result handling, JSON.stringify, post); hops = round − owner.
   */
  readonly owner: Record<"round" | "owner" | "pre" | "pipe" | "post" | "hops", Summary>
  /** Bare round trip main → idle thread → main with a Request-shaped message. */
  readonly hop: Record<"promise" | "effectAsync", Summary>
}

type Splits = Record<string, Array<number>>

const summarizeAll = <K extends string>(splits: Record<K, Array<number>>): Record<K, Summary> =>
  Object.fromEntries(Object.entries(splits).map(([k, v]) => [k, summarize(v as Array<number>)])) as Record<K, Summary>

const push = (into: Splits, from: Record<string, ReadonlyArray<number>>) => {
  for (const [k, v] of Object.entries(from)) (into[k] ??= []).push(...v)
}

interface Patched {
  readonly probe: { post: number; recv: number; handled: number }
  readonly stopTracking: () => void
  readonly restore: () => void
}

type Listener = (...args: Array<unknown>) => void

/** Patches `MessagePort.prototype` so the ports that get a "message" listener while tracking are timestamped. */
const patchPorts = (): Patched => {
  const probe = { post: 0, recv: 0, handled: 0 }
  const tracked = new WeakSet<object>()
  const proto = MessagePort.prototype as unknown as Record<string, unknown>
  const onOwn = Object.getOwnPropertyDescriptor(proto, "on")
  const postOwn = Object.getOwnPropertyDescriptor(proto, "postMessage")
  const on = proto.on as (this: MessagePort, type: string, listener: Listener) => MessagePort
  const postMessage = proto.postMessage as (this: MessagePort, value: unknown, transfer?: unknown) => void
  proto.on = function (this: MessagePort, type: string, listener: Listener) {
    if (type !== "message") return on.call(this, type, listener)
    tracked.add(this)
    return on.call(this, type, (...args: Array<unknown>) => {
      probe.recv = performance.now()
      listener(...args)
      probe.handled = performance.now()
    })
  }
  proto.postMessage = function (this: MessagePort, value: unknown, transfer?: unknown) {
    if (tracked.has(this) && (value as { _tag?: unknown } | null)?._tag === "Request") probe.post = performance.now()
    return postMessage.call(this, value, transfer)
  }
  const stopTracking = () => {
    if (onOwn === undefined) delete proto.on
    else Object.defineProperty(proto, "on", onOwn)
  }
  return {
    probe,
    stopTracking,
    restore: () => {
      stopTracking()
      if (postOwn === undefined) delete proto.postMessage
      else Object.defineProperty(proto, "postMessage", postOwn)
    }
  }
}

// Runs first in the instrumented owner thread: timestamps the owner's data port edges into a shared buffer
// ([0]: request received, [1]: answer posted), then loads the real owner entry unchanged.
const ownerBootstrap = `
const wt = require("node:worker_threads")
const times = new Float64Array(wt.workerData.benchTimes)
const port = wt.workerData.port
const proto = wt.MessagePort.prototype
const on = proto.on
const post = proto.postMessage
proto.on = function (type, listener) {
  if (this !== port || type !== "message") return on.apply(this, arguments)
  return on.call(this, type, function () {
    times[0] = performance.now()
    return listener.apply(this, arguments)
  })
}
proto.postMessage = function (value) {
  if (this === port && value !== null && typeof value === "object" && (value._tag === "Success" || value._tag === "Failure")) {
    times[1] = performance.now()
  }
  return post.apply(this, arguments)
}
import(wt.workerData.benchEntry)
`

/**
 * Swaps `worker_threads.Worker` (for ESM importers too, via `syncBuiltinESMExports`) with a subclass that starts
 * owner threads (`…/owner/owner.cjs`) through `ownerBootstrap`. Bench-only; restored right after one open.
 */
const instrumentOwnerThreads = () => {
  const threads = createRequire(import.meta.url)("node:worker_threads") as {
    Worker: typeof import("node:worker_threads").Worker
  }
  const Original = threads.Worker
  const times = new Float64Array(new SharedArrayBuffer(16))
  const rewrite = (filename: string | URL, options?: WorkerOptions): [string | URL, WorkerOptions | undefined] => {
    const href = filename instanceof URL ? filename.href : pathToFileURL(filename).href
    if (options?.eval === true || !href.endsWith("/owner/owner.cjs")) return [filename, options]
    const workerData = { ...(options?.workerData as object), benchTimes: times.buffer, benchEntry: href }
    return [ownerBootstrap, { ...options, eval: true, workerData }]
  }
  class Instrumented extends Original {
    constructor(filename: string | URL, options?: WorkerOptions) {
      super(...rewrite(filename, options))
    }
  }
  threads.Worker = Instrumented
  syncBuiltinESMExports()
  return {
    times,
    restore: () => {
      threads.Worker = Original
      syncBuiltinESMExports()
    }
  }
}

const closeThread = async (thread: BenchThread) => {
  await thread.ask({ type: "close" })
  await thread.exited
}

export const profileRow = async (
  ctx: Context,
  bundle: string,
  server: StdioServer,
  rounds = 3,
  perBlock = 200
): Promise<ProfileResult> => {
  ctx.progress(`profile: ${rounds} rotating rounds × ${perBlock} calls of host, replica owner, SDK main, SDK thread`)
  const owner = startThread(bundle, { mode: "owner" })
  const sdk = startThread(bundle, { mode: "sdk" })
  const echo = startThread(bundle, { mode: "echo" })
  const wire: WireTimes = { send: 0, reply: 0 }
  let direct: Direct | undefined
  let workerId: string | undefined
  // Patched right around one open, so that only that worker's data port and owner thread are instrumented.
  const patched = patchPorts()
  const instrumented = instrumentOwnerThreads()
  try {
    workerId = await ctx.runtime.runPromise(ctx.workers.open(ctx.config)).finally(() => {
      instrumented.restore()
      patched.stopTracking()
    })
    const d = await connectDirect(server, wire)
    direct = d
    owner.post({ type: "open", server, workerId: "bench-probe", marker: `bench-probe-${ctx.runId}` })
    // The owner's own data-plane events (e.g. Spawned) come first; wait for the bench's answer.
    let opened = await owner.next<{ type?: string; message?: string }>()
    while (opened.type === undefined) opened = await owner.next()
    if (opened.type !== "opened") throw new Error(`replica owner: ${opened.message}`)
    const sdkOpened = await sdk.ask<{ type: string; message?: string }>({ type: "open", server })
    if (sdkOpened.type !== "opened") throw new Error(`sdk thread: ${sdkOpened.message}`)

    const id = workerId
    const { probe } = patched
    const { times } = instrumented
    const host: Splits = {}
    const hostBlock = (n: number) =>
      ctx.runtime.runPromise(
        Effect.gen(function* () {
          const s: Splits = { total: [], pre: [], flight: [], decode: [], resume: [], owner: [], hops: [] }
          for (let i = 0; i < n; i++) {
            times[0] = times[1] = 0
            const t0 = performance.now()
            yield* ctx.workers.callTool(id, "echo", { token: `h${i}` })
            const t1 = performance.now()
            s.total!.push(t1 - t0)
            s.pre!.push(probe.post - t0)
            s.flight!.push(probe.recv - probe.post)
            s.decode!.push(probe.handled - probe.recv)
            s.resume!.push(t1 - probe.handled)
            if (times[0]! > 0 && times[1]! > times[0]!) {
              s.owner!.push(times[1]! - times[0]!)
              s.hops!.push(probe.recv - probe.post - (times[1]! - times[0]!))
            }
          }
          return s
        })
      )

    const replica: Splits = {}
    const replicaBlock = async (n: number) => {
      const s: Splits = { round: [], owner: [], pre: [], pipe: [], post: [], hops: [] }
      for (let i = 0; i < n; i++) {
        const params = JSON.stringify({ name: "echo", arguments: { token: `o${i}` } })
        const t0 = performance.now()
        const reply = await owner.ask<{ _tag: string; bench: OwnerTimes }>({
          _tag: "Request",
          requestId: `req_probe${i}`,
          method: "tools/call",
          params,
          deadline: Date.now() + 30_000
        })
        const round = performance.now() - t0
        if (reply._tag !== "Success") throw new Error(`replica owner answered ${reply._tag}`)
        const b = reply.bench
        s.round!.push(round)
        s.owner!.push(b.tOut - b.tIn)
        s.pre!.push(b.tSend - b.tIn)
        s.pipe!.push(b.tReply - b.tSend)
        s.post!.push(b.tOut - b.tReply)
        s.hops!.push(round - (b.tOut - b.tIn))
      }
      return s
    }

    const main: Splits = {}
    const mainBlock = async (n: number) => {
      const s: Splits = { total: [], pre: [], pipe: [], post: [] }
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        await d.client.callTool({ name: "echo", arguments: { token: `m${i}` } })
        const t1 = performance.now()
        s.total!.push(t1 - t0)
        s.pre!.push(wire.send - t0)
        s.pipe!.push(wire.reply - wire.send)
        s.post!.push(t1 - wire.reply)
      }
      return s
    }

    const thread: Splits = {}
    const threadBlock = async (n: number) => {
      const reply = await sdk.ask<{ type: string; splits: SdkSplits }>({ type: "block", n, tag: "s" })
      return reply.splits as unknown as Splits
    }

    const variants: Array<[Splits, (n: number) => Promise<Splits>]> = [
      [host, hostBlock],
      [replica, replicaBlock],
      [main, mainBlock],
      [thread, threadBlock]
    ]
    for (const [, run] of variants) await run(50)
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < variants.length; k++) {
        const [into, run] = variants[(r + k) % variants.length]!
        push(into, await run(perBlock))
      }
    }

    // Bare hop: a Request-shaped message to an idle thread that bounces it.
    const message = (i: number) => ({
      _tag: "Request",
      requestId: `req_hop${i}`,
      method: "tools/call",
      params: '{"name":"echo","arguments":{"token":"x"}}',
      deadline: Date.now() + 30_000
    })
    const hopPromise: Array<number> = []
    const hopEffect: Array<number> = []
    const promiseBlock = async (n: number, into: Array<number>) => {
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        await echo.ask(message(i))
        into.push(performance.now() - t0)
      }
    }
    const effectBlock = (n: number, into: Array<number>) =>
      ctx.runtime.runPromise(
        Effect.gen(function* () {
          for (let i = 0; i < n; i++) {
            const t0 = performance.now()
            yield* Effect.async<unknown>((resume) => {
              echo.setHandler((m) => resume(Effect.succeed(m)))
              echo.post(message(i))
            })
            into.push(performance.now() - t0)
          }
          echo.setHandler(undefined)
        })
      )
    await promiseBlock(100, [])
    await effectBlock(100, [])
    for (let r = 0; r < rounds; r++) {
      await promiseBlock(500, hopPromise)
      await effectBlock(500, hopEffect)
    }

    return {
      calls: rounds * perBlock,
      directMain: summarizeAll(main as Record<"total" | "pre" | "pipe" | "post", Array<number>>),
      directThread: summarizeAll(thread as Record<"total" | "pre" | "pipe" | "post", Array<number>>),
      host: summarizeAll({
        total: host.total!,
        pre: host.pre!,
        flight: host.flight!,
        decode: host.decode!,
        resume: host.resume!
      }),
      realOwner: (host.owner?.length ?? 0) > 0 ? { owner: summarize(host.owner!), hops: summarize(host.hops!) } : null,
      owner: summarizeAll(replica as Record<"round" | "owner" | "pre" | "pipe" | "post" | "hops", Array<number>>),
      hop: { promise: summarize(hopPromise), effectAsync: summarize(hopEffect) }
    }
  } finally {
    instrumented.restore()
    patched.restore()
    const id = workerId
    await Promise.allSettled([
      id === undefined ? Promise.resolve() : ctx.runtime.runPromise(ctx.workers.close(id)),
      closeThread(owner),
      closeThread(sdk),
      closeThread(echo),
      direct === undefined ? Promise.resolve() : closeDirect(direct)
    ])
  }
}
