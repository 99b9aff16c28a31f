// The measured rows of `npm run bench`. Every row runs mcp-worker and the SDK used directly side by side in
// interleaved blocks (A/B, then B/A, …) so that machine drift hits both variants alike.
import type { McpWorkers, McpWorkersService } from "@mcp-worker/core/McpWorkers"
import type { StdioConfigInput } from "@mcp-worker/core/ServerConfig"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { PerformanceObserver } from "node:perf_hooks"
import type * as ManagedRuntime from "effect/ManagedRuntime"
// From its source, as the bench runs it: the package name would resolve to a built `dist`.
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio"
import * as McpClient from "../packages/node/src/McpClient.js"
import { defaultSampleInterval } from "../packages/node/src/internal/metrics/host.js"
import {
  closeDirect,
  connectDirect,
  type Direct,
  directEchoBlock,
  type EchoClient,
  type StdioServer,
  workerEchoBlock
} from "./loops.js"
import { benchProcesses, type FoundProcess } from "./procs.js"
import * as Profiler from "./profiler.js"
import { compare, type Comparison, median, summarize, type Summary } from "./stats.js"
import { type BenchThread, startThread } from "./threads.js"

/** What every row needs. */
export interface Context {
  readonly runtime: ManagedRuntime.ManagedRuntime<McpWorkers, never>
  readonly workers: McpWorkersService
  readonly server: StdioServer
  readonly config: StdioConfigInput
  readonly runId: string
  readonly progress: (line: string) => void
  readonly gc: () => void
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `a` and `b` for `blocks` rounds, alternating which goes first; returns the blocks of each. */
export const interleave = async <T>(
  blocks: number,
  a: (i: number) => Promise<T>,
  b: (i: number) => Promise<T>
): Promise<{ a: Array<T>; b: Array<T> }> => {
  const out = { a: [] as Array<T>, b: [] as Array<T> }
  for (let i = 0; i < blocks; i++) {
    if (i % 2 === 0) {
      out.a.push(await a(i))
      out.b.push(await b(i))
    } else {
      out.b.push(await b(i))
      out.a.push(await a(i))
    }
  }
  return out
}

/** A worker and a direct client on the same fixture, kept for the call, payload and cancel rows. */
export interface Pair {
  readonly workerId: string
  readonly direct: Direct
}

export const openPair = async (ctx: Context): Promise<Pair> => {
  const workerId = await ctx.runtime.runPromise(ctx.workers.open(ctx.config))
  const direct = await connectDirect(ctx.server)
  return { workerId, direct }
}

export const closePair = async (ctx: Context, pair: Pair): Promise<void> => {
  await Promise.all([ctx.runtime.runPromise(ctx.workers.close(pair.workerId)), closeDirect(pair.direct)])
}

// callTool, tiny echo, host thread

const callRow = async (
  ctx: Context,
  pair: Pair,
  client: EchoClient,
  blocks = 5,
  perBlock = 200
): Promise<Comparison> => {
  const worker = (i: number) => ctx.runtime.runPromise(workerEchoBlock(ctx.workers, pair.workerId, perBlock, `w${i}_`))
  const direct = (i: number) => directEchoBlock(client, perBlock, `d${i}_`)
  ctx.progress(`call: warm-up, then ${blocks} interleaved blocks × ${perBlock} calls`)
  await worker(-1)
  await direct(-1)
  const { a, b } = await interleave(blocks, worker, direct)
  return compare(a, b)
}

/**
 * The host call against the SDK 1.x `Client` (`call`, the row with the target), then against the SDK v2 client the
 * owner runs on, with its own stdio transport (`callV2`): what the host path adds over the client it wraps, apart from
 * the SDK's major version.
 */
export const callRows = async (
  ctx: Context,
  pair: Pair
): Promise<{ readonly call: Comparison; readonly callV2: Comparison }> => {
  const call = await callRow(ctx, pair, pair.direct.client)
  const v2 = await connectV2(ctx.server)
  try {
    return { call, callV2: await callRow(ctx, pair, v2.client) }
  } finally {
    await v2.client.close()
  }
}

// callTool from a remote worker_thread

export interface RemoteRow {
  readonly available: boolean
  readonly note?: string
  /** Against the SDK used directly in the same remote thread (the calling thread). */
  readonly vsThreadDirect?: Comparison
  /** Against the SDK used directly in the main thread (the same direct as the host-thread row). */
  readonly vsMainDirect?: Comparison
  /**
   * The host thread's busy time per remote call (its event loop's active time during the remote blocks, over their
   * calls): everything the host does to relay one, in microseconds.
   */
  readonly hostActiveUs?: number
}

export const remoteRow = async (
  ctx: Context,
  pair: Pair,
  bundle: string,
  blocks = 5,
  perBlock = 200
): Promise<RemoteRow> => {
  const thread = startThread(bundle, { workerId: pair.workerId, server: ctx.server })
  const first = await thread.next<{ type: string; message?: string }>()
  if (first.type !== "ready") {
    await thread.exited
    return {
      available: false,
      note:
        first.type === "unavailable"
          ? "n/a (layerRemote not available)"
          : `n/a (remote thread failed: ${first.message ?? "unknown"})`
    }
  }
  const inThread = async (variant: "remote" | "direct", tag: string): Promise<Array<number>> => {
    const reply = await thread.ask<{ type: string; samples?: Array<number>; message?: string }>({
      type: "block",
      variant,
      n: perBlock,
      tag
    })
    if (reply.type !== "block" || reply.samples === undefined) throw new Error(`remote block: ${reply.message}`)
    return reply.samples
  }
  try {
    ctx.progress(
      `remote: warm-up, then ${blocks} rotating blocks × ${perBlock} calls (remote, thread direct, main direct)`
    )
    await inThread("remote", "rw")
    await inThread("direct", "rd")
    await directEchoBlock(pair.direct.client, perBlock, "md")
    const remote: Array<Array<number>> = []
    const threadDirect: Array<Array<number>> = []
    const mainDirect: Array<Array<number>> = []
    // This thread runs the host: while a remote block runs, its event loop does nothing but relay that block's calls.
    let hostActiveMs = 0
    // The host thread's profile over the remote blocks alone (`remote-host-<i>`).
    const profiler = Profiler.make(process.env.BENCH_PROFILE_DIR)
    const variants = [
      (i: number) =>
        profiler.around(`remote-host-${i}`, async () => {
          const before = performance.eventLoopUtilization()
          const samples = await inThread("remote", `r${i}_`)
          hostActiveMs += performance.eventLoopUtilization(before).active
          remote.push(samples)
        }),
      async (i: number) => threadDirect.push(await inThread("direct", `t${i}_`)),
      async (i: number) => mainDirect.push(await directEchoBlock(pair.direct.client, perBlock, `m${i}_`))
    ]
    for (let i = 0; i < blocks; i++) {
      for (let k = 0; k < variants.length; k++) await variants[(i + k) % variants.length]!(i)
    }
    return {
      available: true,
      vsThreadDirect: compare(remote, threadDirect),
      vsMainDirect: compare(remote, mainDirect),
      hostActiveUs: (hostActiveMs * 1000) / (blocks * perBlock)
    }
  } finally {
    await thread.ask({ type: "close" })
    await thread.exited
  }
}

// open → ready

export interface OpenRow {
  readonly comparison: Comparison
  /** Time to close what was opened (not part of the ratio). */
  readonly workerClose: Summary
  readonly directClose: Summary
}

export const openRow = async (ctx: Context, rounds = 10): Promise<OpenRow> => {
  const closeW: Array<number> = []
  const closeD: Array<number> = []
  const worker = async () => {
    const t0 = performance.now()
    const id = await ctx.runtime.runPromise(ctx.workers.open(ctx.config))
    const t1 = performance.now()
    await ctx.runtime.runPromise(ctx.workers.close(id))
    closeW.push(performance.now() - t1)
    return [t1 - t0]
  }
  const direct = async () => {
    const t0 = performance.now()
    const d = await connectDirect(ctx.server)
    const t1 = performance.now()
    await closeDirect(d)
    closeD.push(performance.now() - t1)
    return [t1 - t0]
  }
  ctx.progress(`open: 1 warm-up round, then ${rounds} alternating rounds`)
  await worker()
  await direct()
  closeW.length = 0
  closeD.length = 0
  const { a, b } = await interleave(rounds, worker, direct)
  return { comparison: compare(a, b), workerClose: summarize(closeW), directClose: summarize(closeD) }
}

// open → ready: what the era probe costs (`protocol: "auto"`, the default, asks with server/discover first)

/** `open` with `protocol: "legacy"` (no probe) against the default `"auto"`, interleaved, on the 1.x fixture. */
export const probeRow = async (ctx: Context, rounds = 10): Promise<Comparison> => {
  const opened = (protocol: "auto" | "legacy") => async () => {
    const t0 = performance.now()
    const id = await ctx.runtime.runPromise(ctx.workers.open({ ...ctx.config, protocol }))
    const t1 = performance.now()
    await ctx.runtime.runPromise(ctx.workers.close(id))
    return [t1 - t0]
  }
  ctx.progress(`open, auto vs legacy: 1 warm-up round, then ${rounds} alternating rounds`)
  await opened("auto")()
  await opened("legacy")()
  const { a, b } = await interleave(rounds, opened("auto"), opened("legacy"))
  return compare(a, b)
}

// 1 MiB result

export const payloadRow = async (ctx: Context, pair: Pair, blocks = 5, perBlock = 8): Promise<Comparison> => {
  const bytes = 1_048_576
  const check = (result: unknown) => {
    const first = (result as { content?: Array<{ text?: string }> }).content?.[0]
    if (first?.text?.length !== bytes) throw new Error("big returned the wrong size")
  }
  const worker = (n: number) =>
    ctx.runtime.runPromise(
      Effect.gen(function* () {
        const out: Array<number> = []
        for (let i = 0; i < n; i++) {
          const t0 = performance.now()
          const result = yield* ctx.workers.callTool(pair.workerId, "big", { bytes })
          out.push(performance.now() - t0)
          check(result)
        }
        return out
      })
    )
  const direct = async (n: number) => {
    const out: Array<number> = []
    for (let i = 0; i < n; i++) {
      const t0 = performance.now()
      const result = await pair.direct.client.callTool({ name: "big", arguments: { bytes } })
      out.push(performance.now() - t0)
      check(result)
    }
    return out
  }
  ctx.progress(`payload: warm-up, then ${blocks} interleaved blocks × ${perBlock} calls of 1 MiB`)
  await worker(3)
  await direct(3)
  const { a, b } = await interleave(
    blocks,
    () => worker(perBlock),
    () => direct(perBlock)
  )
  return compare(a, b)
}

// interruption → the server sees the cancel

interface CancelLog {
  readonly cancelled: ReadonlyArray<{ requestId: string | number | null; at: number }>
  readonly aborted: ReadonlyArray<{ requestId: string | number; at: number }>
}

export interface CancelRow {
  /** serverAbortedAt − T (ms): the `sleep` handler saw its signal abort. */
  readonly worker: Summary
  readonly direct: Summary
  /** serverReceivedAt − T (ms): the `notifications/cancelled` line reached the server's transport. */
  readonly workerReceived: Summary
  readonly directReceived: Summary
}

/** Epoch ms with sub-ms precision, comparable with the fixture's `performance.timeOrigin + performance.now()`. */
const epochNow = (): number => performance.timeOrigin + performance.now()

export const cancelRow = async (ctx: Context, pair: Pair, runs = 30): Promise<CancelRow> => {
  let seenW = 0
  let seenD = 0
  // Reads the server's record of the one new abort since the last read (the lists only grow).
  const readNew = async (read: () => Promise<CancelLog>, seen: number, T: number) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const log = await read()
      if (log.aborted.length > seen) {
        const aborted = log.aborted[log.aborted.length - 1]!
        const received = log.cancelled.find((c) => c.requestId === aborted.requestId)
        return { count: log.aborted.length, aborted: aborted.at - T, received: (received?.at ?? Number.NaN) - T }
      }
      await delay(5)
    }
    throw new Error("the server never saw the cancellation")
  }
  const logOf = (result: unknown) => (result as { structuredContent: CancelLog }).structuredContent
  const readW = () => ctx.runtime.runPromise(ctx.workers.callTool(pair.workerId, "cancelled")).then(logOf)
  const readD = () => pair.direct.client.callTool({ name: "cancelled" }).then(logOf)

  const worker = async (i: number) => {
    const fiber = ctx.runtime.runFork(ctx.workers.callTool(pair.workerId, "sleep", { ms: 10_000, token: `c${i}` }))
    await delay(30)
    const T = epochNow()
    await ctx.runtime.runPromise(Fiber.interrupt(fiber))
    const r = await readNew(readW, seenW, T)
    seenW = r.count
    return r
  }
  const direct = async (i: number) => {
    const controller = new AbortController()
    const call = pair.direct.client.callTool({ name: "sleep", arguments: { ms: 10_000, token: `c${i}` } }, undefined, {
      signal: controller.signal
    })
    const settled = call.then(
      () => undefined,
      () => undefined
    )
    await delay(30)
    const T = epochNow()
    controller.abort("bench")
    await settled
    const r = await readNew(readD, seenD, T)
    seenD = r.count
    return r
  }
  ctx.progress(`cancel: ${runs} alternating interruptions of a running sleep`)
  const { a, b } = await interleave(runs, worker, direct)
  return {
    worker: summarize(a.map((r) => r.aborted)),
    direct: summarize(b.map((r) => r.aborted)),
    workerReceived: summarize(a.map((r) => r.received)),
    directReceived: summarize(b.map((r) => r.received))
  }
}

// RSS per open worker

export interface RssRow {
  /** MiB per open worker (owner thread + client; the server is another process). */
  readonly worker: ReadonlyArray<number>
  /** MiB per direct SDK client in this thread, for contrast. */
  readonly direct: ReadonlyArray<number>
  readonly n: number
}

const MiB = 1024 * 1024

export const rssRow = async (ctx: Context, n = 8): Promise<RssRow> => {
  const settle = async () => {
    await delay(100)
    ctx.gc()
    await delay(50)
    ctx.gc()
  }
  const worker = async () => {
    await settle()
    const before = process.memoryUsage.rss()
    const ids = await ctx.runtime.runPromise(
      Effect.forEach(
        Array.from({ length: n }, (_, i) => i),
        (i) => Effect.tap(ctx.workers.open(ctx.config), (id) => ctx.workers.callTool(id, "echo", { token: `rss${i}` })),
        { concurrency: "unbounded" }
      )
    )
    await settle()
    const after = process.memoryUsage.rss()
    await ctx.runtime.runPromise(Effect.forEach(ids, (id) => ctx.workers.close(id), { concurrency: "unbounded" }))
    return (after - before) / n / MiB
  }
  const direct = async () => {
    await settle()
    const before = process.memoryUsage.rss()
    const clients = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const d = await connectDirect(ctx.server)
        await d.client.callTool({ name: "echo", arguments: { token: `rss${i}` } })
        return d
      })
    )
    await settle()
    const after = process.memoryUsage.rss()
    await Promise.all(clients.map(closeDirect))
    return (after - before) / n / MiB
  }
  ctx.progress(`rss: ${n} workers vs ${n} direct clients, 2 alternating rounds each`)
  const { a, b } = await interleave(
    2,
    () => worker(),
    () => direct()
  )
  return { worker: a, direct: b, n }
}

// fan-out: 32 opened concurrently, one call each, all closed

export interface FanOutPhases {
  readonly open: number
  readonly call: number
  readonly close: number
  readonly total: number
  readonly left: ReadonlyArray<FoundProcess>
}

export interface FanOutRow {
  readonly n: number
  readonly worker: ReadonlyArray<FanOutPhases>
  readonly direct: ReadonlyArray<FanOutPhases>
  /** `n` bare threads, each loading the SDK v2 client, connecting, calling once and closing: the floor. */
  readonly floor: ReadonlyArray<FanOutPhases>
  /** median(worker total) / median(direct total) */
  readonly ratio: number
  /** median(worker total) / median(floor total) */
  readonly floorRatio: number
}

/** One bare floor thread (bench/floorEntry.ts) connecting, and what it answers. */
const startFloorThread = async (file: string, server: StdioServer): Promise<BenchThread> => {
  const thread = startThread(file, { server })
  const first = await thread.next<{ type: string; message?: string }>()
  if (first.type !== "ready") throw new Error(`floor thread: ${first.message ?? first.type}`)
  return thread
}

const floorCall = async (thread: BenchThread, token: string): Promise<void> => {
  const reply = await thread.ask<{ type: string; message?: string }>({ type: "call", token })
  if (reply.type !== "called") throw new Error(`floor thread: ${reply.message ?? reply.type}`)
}

export const fanOutRow = async (ctx: Context, floorFile: string, n = 32, rounds = 1): Promise<FanOutRow> => {
  const range = Array.from({ length: n }, (_, i) => i)
  const worker = async (): Promise<FanOutPhases> => {
    const t0 = performance.now()
    const ids = await ctx.runtime.runPromise(
      Effect.forEach(range, () => ctx.workers.open(ctx.config), { concurrency: "unbounded" })
    )
    const t1 = performance.now()
    await ctx.runtime.runPromise(
      Effect.forEach(ids, (id, i) => ctx.workers.callTool(id, "echo", { token: `f${i}` }), {
        concurrency: "unbounded"
      })
    )
    const t2 = performance.now()
    await ctx.runtime.runPromise(Effect.forEach(ids, (id) => ctx.workers.close(id), { concurrency: "unbounded" }))
    const t3 = performance.now()
    return { open: t1 - t0, call: t2 - t1, close: t3 - t2, total: t3 - t0, left: benchProcesses(ctx.runId) }
  }
  const direct = async (): Promise<FanOutPhases> => {
    const t0 = performance.now()
    const clients = await Promise.all(range.map(() => connectDirect(ctx.server)))
    const t1 = performance.now()
    await Promise.all(clients.map((d, i) => d.client.callTool({ name: "echo", arguments: { token: `f${i}` } })))
    const t2 = performance.now()
    await Promise.all(clients.map(closeDirect))
    const t3 = performance.now()
    return { open: t1 - t0, call: t2 - t1, close: t3 - t2, total: t3 - t0, left: benchProcesses(ctx.runId) }
  }
  const floor = async (): Promise<FanOutPhases> => {
    const t0 = performance.now()
    const threads = await Promise.all(range.map(() => startFloorThread(floorFile, ctx.server)))
    const t1 = performance.now()
    await Promise.all(threads.map((thread, i) => floorCall(thread, `f${i}`)))
    const t2 = performance.now()
    await Promise.all(threads.map((thread) => (thread.post({ type: "close" }), thread.exited)))
    const t3 = performance.now()
    return { open: t1 - t0, call: t2 - t1, close: t3 - t2, total: t3 - t0, left: benchProcesses(ctx.runId) }
  }
  ctx.progress(`fan-out: ${n} concurrently, ${rounds} rotated round(s) of workers, direct clients, floor threads`)
  const [a, b, c] = await rotate(rounds, [worker, direct, floor])
  const total = (phases: ReadonlyArray<FanOutPhases>) => median(phases.map((p) => p.total))
  return {
    n,
    worker: a!,
    direct: b!,
    floor: c!,
    ratio: total(a!) / total(b!),
    floorRatio: total(a!) / total(c!)
  }
}

// McpClient: the same connection in the calling thread, against the SDK used directly in that thread

/** One McpClient held open in a scope of its own, as a long-lived caller holds it. */
export interface HeldClient {
  readonly client: McpClient.McpClient
  readonly close: () => Promise<void>
}

export const openClient = async (config: StdioConfigInput): Promise<HeldClient> => {
  const scope = Effect.runSync(Scope.make())
  const client = await Effect.runPromise(Scope.extend(McpClient.make(config), scope))
  return { client, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** `n` sequential echo calls made by `call` inside one `Effect.gen`; per-call latencies in ms. */
const effectEchoBlock = (
  call: (token: string) => Effect.Effect<unknown, unknown>,
  n: number,
  tag: string
): Promise<Array<number>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const out: Array<number> = []
      for (let i = 0; i < n; i++) {
        const token = `${tag}${i}`
        const t0 = performance.now()
        const result = yield* call(token)
        out.push(performance.now() - t0)
        if ((result as { structuredContent?: { token?: unknown } }).structuredContent?.token !== token) {
          return yield* Effect.dieMessage("an echo returned the wrong token")
        }
      }
      return out
    })
  )

const clientEchoBlock = (client: McpClient.McpClient, n: number, tag: string): Promise<Array<number>> =>
  effectEchoBlock((token) => client.callTool("echo", { token }), n, tag)

/**
 * The SDK called from the same kind of loop as `clientEchoBlock`: one interruptible `Effect.async` per call inside
 * one `Effect.gen`. It is the least any Effect API over the SDK adds to a call — the floor under `McpClient` —
 * measured in the same run rather than assumed to be nothing.
 */
const sdkInEffectBlock = (client: EchoClient, n: number, tag: string): Promise<Array<number>> =>
  effectEchoBlock(
    (token) =>
      Effect.async<unknown>((resume) => {
        client.callTool({ name: "echo", arguments: { token } }).then(
          (value) => resume(Effect.succeed(value)),
          (error) => resume(Effect.die(error))
        )
        return Effect.void
      }),
    n,
    tag
  )

/**
 * The SDK v2 client, the one every owner and `McpClient` run on, connected with its own stdio transport: called from
 * the same Effect loop, it tells what `McpClient` adds over the client it wraps from what the SDK's major version
 * costs.
 */
const connectV2 = async (server: StdioServer): Promise<{ readonly client: ClientV2 }> => {
  const client = new ClientV2({ name: "mcp-worker-bench", version: "0.1.0" }, { capabilities: {} })
  await client.connect(
    new StdioClientTransportV2({ command: server.command, args: [...server.args], env: { ...server.env } })
  )
  return { client }
}

/** `McpClient` against the SDK used directly, and against the SDK called from an Effect loop (the floor). */
export interface ClientCallRow {
  /** McpClient (variant) vs the SDK awaited in a plain loop (baseline): the row with the target. */
  readonly call: Comparison
  /** The SDK in one `Effect.async` per call (variant) vs the SDK awaited in a plain loop: what Effect itself adds. */
  readonly floor: Comparison
  /** McpClient (variant) vs the SDK in one `Effect.async` per call: what the library adds over that floor. */
  readonly overFloor: Comparison
  /** McpClient (variant) vs the SDK v2 client in one `Effect.async` per call: what it adds over the client it wraps. */
  readonly overV2: Comparison
}

export const clientCallRow = async (ctx: Context, blocks = 6, perBlock = 200): Promise<ClientCallRow> => {
  const held = await openClient(ctx.config)
  const direct = await connectDirect(ctx.server)
  const inEffect = await connectDirect(ctx.server)
  const v2 = await connectV2(ctx.server)
  try {
    const variants = [
      (i: number) => clientEchoBlock(held.client, perBlock, `c${i}_`),
      (i: number) => directEchoBlock(direct.client, perBlock, `d${i}_`),
      (i: number) => sdkInEffectBlock(inEffect.client, perBlock, `e${i}_`),
      (i: number) => sdkInEffectBlock(v2.client, perBlock, `v${i}_`)
    ]
    ctx.progress(`McpClient call: warm-up, then ${blocks} rotated blocks × ${perBlock} calls of each of 4 variants`)
    for (const variant of variants) await variant(-1)
    const [client, sdk, effect, effectV2] = await rotate(
      blocks,
      profiled(variants, ["client", "sdk", "effect", "effectV2"])
    )
    return {
      call: compare(client!, sdk!),
      floor: compare(effect!, sdk!),
      overFloor: compare(client!, effect!),
      overV2: compare(client!, effectV2!)
    }
  } finally {
    await Promise.all([held.close(), closeDirect(direct), closeDirect(inEffect), v2.client.close()])
  }
}

/**
 * With `BENCH_PROFILE_DIR`, each variant's blocks are profiled (this thread, one file per block and variant), so that
 * what one variant does beyond another can be read from the same run.
 */
const profiled = <T>(
  variants: ReadonlyArray<(i: number) => Promise<T>>,
  names: ReadonlyArray<string>
): ReadonlyArray<(i: number) => Promise<T>> => {
  if (process.env.BENCH_PROFILE_DIR === undefined) return variants
  const profiler = Profiler.make(process.env.BENCH_PROFILE_DIR)
  return variants.map((variant, k) => (i: number) => profiler.around(`${names[k]}-${i}`, () => variant(i)))
}

/** `blocks` rounds of every variant, each round starting one variant later, so that no variant always goes first. */
const rotate = async <T>(
  blocks: number,
  variants: ReadonlyArray<(i: number) => Promise<T>>
): Promise<Array<Array<T>>> => {
  const out = variants.map(() => [] as Array<T>)
  for (let i = 0; i < blocks; i++) {
    for (let j = 0; j < variants.length; j++) {
      const k = (i + j) % variants.length
      out[k]!.push(await variants[k]!(i))
    }
  }
  return out
}

export const clientOpenRow = async (ctx: Context, rounds = 10): Promise<OpenRow> => {
  const closeC: Array<number> = []
  const closeD: Array<number> = []
  const client = async () => {
    const t0 = performance.now()
    const held = await openClient(ctx.config)
    const t1 = performance.now()
    await held.close()
    closeC.push(performance.now() - t1)
    return [t1 - t0]
  }
  const direct = async () => {
    const t0 = performance.now()
    const d = await connectDirect(ctx.server)
    const t1 = performance.now()
    await closeDirect(d)
    closeD.push(performance.now() - t1)
    return [t1 - t0]
  }
  ctx.progress(`McpClient open: 1 warm-up round, then ${rounds} alternating rounds`)
  await client()
  await direct()
  closeC.length = 0
  closeD.length = 0
  const { a, b } = await interleave(rounds, client, direct)
  return { comparison: compare(a, b), workerClose: summarize(closeC), directClose: summarize(closeD) }
}

// isolation: "process" against the default, an owner thread: the same worker operations, interleaved

/** An echo block and a 1 MiB block per isolation, on two workers of the same fixture, process first. */
export interface IsolationRow {
  /** callTool echo: process owner (variant) vs thread owner (baseline). */
  readonly call: Comparison
  /** callTool of a 1 MiB result: process owner vs thread owner. */
  readonly payload: Comparison
  /** open → ready: process owner vs thread owner. */
  readonly open: Comparison
}

const bigBlock = (ctx: Context, workerId: string, n: number, bytes: number) =>
  ctx.runtime.runPromise(
    Effect.gen(function* () {
      const out: Array<number> = []
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        const result = yield* ctx.workers.callTool(workerId, "big", { bytes })
        out.push(performance.now() - t0)
        const first = (result as { content?: Array<{ text?: string }> }).content?.[0]
        if (first?.text?.length !== bytes) return yield* Effect.dieMessage("big returned the wrong size")
      }
      return out
    })
  )

export const isolationRow = async (ctx: Context, blocks = 5, perBlock = 200, rounds = 10): Promise<IsolationRow> => {
  const open = (isolation: "thread" | "process") => ctx.runtime.runPromise(ctx.workers.open(ctx.config, { isolation }))
  const ids = { process: await open("process"), thread: await open("thread") }
  let call: Comparison
  let payload: Comparison
  try {
    const echo = (isolation: "thread" | "process") => (i: number) =>
      ctx.runtime.runPromise(workerEchoBlock(ctx.workers, ids[isolation], perBlock, `${isolation[0]}${i}_`))
    ctx.progress(`isolation call: warm-up, then ${blocks} interleaved blocks × ${perBlock} calls`)
    await echo("process")(-1)
    await echo("thread")(-1)
    const calls = await interleave(blocks, echo("process"), echo("thread"))
    call = compare(calls.a, calls.b)
    const big = (isolation: "thread" | "process") => () => bigBlock(ctx, ids[isolation], 8, 1_048_576)
    ctx.progress(`isolation payload: ${blocks} interleaved blocks × 8 calls of 1 MiB`)
    await big("process")()
    await big("thread")()
    const big1 = await interleave(blocks, big("process"), big("thread"))
    payload = compare(big1.a, big1.b)
  } finally {
    await ctx.runtime.runPromise(Effect.all([ctx.workers.close(ids.process), ctx.workers.close(ids.thread)]))
  }
  const openClose = (isolation: "thread" | "process") => async () => {
    const t0 = performance.now()
    const id = await open(isolation)
    const t1 = performance.now()
    await ctx.runtime.runPromise(ctx.workers.close(id))
    return [t1 - t0]
  }
  ctx.progress(`isolation open: 1 warm-up round, then ${rounds} alternating rounds`)
  await openClose("process")()
  await openClose("thread")()
  const opens = await interleave(rounds, openClose("process"), openClose("thread"))
  return { call, payload, open: compare(opens.a, opens.b) }
}

// Cost as the work grows: 1, 32 and 128 idle workers open, one of them called. The idle window is one period of the
// tree sampling (C81), the one pass an idle host makes: a shorter window would hold it or not, by chance.

export interface IdleSize {
  readonly n: number
  /** callTool echo on the first worker while `n` workers are open (ms). */
  readonly call: Summary
  /** Host RSS over the same host with no worker open, per open worker (MiB; owner threads included, servers not). */
  readonly rssPerWorker: number
  /** The host thread's steady event-loop active time when idle, beyond that of no worker, per worker per second. */
  readonly hostActiveUsPerWorkerS: number
  /**
   * The same, added by each worker opened since the size before (or since none): what a worker costs, without the
   * share of the machine's other processes in the one tree pass (C81 reads every process of the machine).
   */
  readonly addedUsPerWorkerS: number
  /** V8's collections of the host's heap in the two idle windows (ms): its memory reducer runs once the host falls idle. */
  readonly gcMs: number
}

export interface IdleRow {
  readonly sizes: ReadonlyArray<IdleSize>
  /** callTool on one worker: median with 128 open over the median with 1 open (both visits to 1 pooled). */
  readonly callRatio: number
}

/** The host thread's event-loop active time (ms) over `ms` of doing nothing, and V8's collections in it. */
const activeOver = async (ms: number): Promise<{ readonly active: number; readonly gc: number }> => {
  let gc = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gc += entry.duration
  })
  observer.observe({ entryTypes: ["gc"] })
  const before = performance.eventLoopUtilization()
  await delay(ms)
  const active = performance.eventLoopUtilization(before).active
  observer.disconnect()
  return { active, gc }
}

/**
 * The host's steady idle cost: the quieter of two consecutive windows of `ms`. Once a busy host falls idle, V8's
 * memory reducer collects its heap, once (tens of ms, partly in incremental steps no `gc` entry reports): the host's
 * heap, not work its workers cause. The collections seen in both windows are reported beside.
 */
const idleActiveMs = async (ms: number): Promise<{ readonly active: number; readonly gc: number }> => {
  const first = await activeOver(ms)
  const second = await activeOver(ms)
  return { active: Math.min(first.active, second.active), gc: first.gc + second.gc }
}

export const idleRow = async (
  ctx: Context,
  sizes: ReadonlyArray<number> = [1, 32, 128],
  windowMs = Duration.toMillis(defaultSampleInterval),
  blocks = 4,
  perBlock = 200
): Promise<IdleRow> => {
  const settle = async () => {
    await delay(200)
    ctx.gc()
    await delay(50)
    ctx.gc()
  }
  await settle()
  const rss0 = process.memoryUsage.rss()
  const active0 = await idleActiveMs(windowMs)
  const ids: Array<string> = []
  const openUpTo = (n: number) =>
    ctx.runtime.runPromise(
      Effect.forEach(
        Array.from({ length: n - ids.length }, (_, i) => i),
        () => Effect.map(ctx.workers.open(ctx.config), (id) => void ids.push(id)),
        { concurrency: 16 }
      )
    )
  const closeDownTo = (n: number) =>
    ctx.runtime.runPromise(
      Effect.forEach(ids.splice(n), (id) => ctx.workers.close(id), { concurrency: 16, discard: true })
    )
  const calls = async (tag: string) => {
    const out: Array<number> = []
    for (let b = 0; b < blocks; b++) {
      out.push(...(await ctx.runtime.runPromise(workerEchoBlock(ctx.workers, ids[0]!, perBlock, `${tag}${b}_`))))
    }
    return out
  }
  const measured: Array<IdleSize> = []
  const atOne: Array<number> = []
  // The size before, and its steady idle time: what each worker since then added.
  let previous = { n: 0, active: active0.active }
  try {
    for (const n of sizes) {
      ctx.progress(
        `idle: ${n} worker(s) open; two idle windows of ${windowMs} ms, then ${blocks} × ${perBlock} calls on one`
      )
      await openUpTo(n)
      await ctx.runtime.runPromise(workerEchoBlock(ctx.workers, ids[0]!, perBlock, `warm${n}_`))
      await settle()
      const rss = process.memoryUsage.rss()
      const idle = await idleActiveMs(windowMs)
      const samples = await calls(`i${n}_`)
      if (n === 1) atOne.push(...samples)
      measured.push({
        n,
        call: summarize(samples),
        rssPerWorker: (rss - rss0) / n / MiB,
        hostActiveUsPerWorkerS: ((idle.active - active0.active) * 1000) / n / (windowMs / 1000),
        addedUsPerWorkerS: ((idle.active - previous.active) * 1000) / (n - previous.n) / (windowMs / 1000),
        gcMs: idle.gc
      })
      previous = { n, active: idle.active }
    }
    // Back to one: the machine drifts over the minutes this row takes, so 1 is measured before and after 128.
    ctx.progress("idle: back to 1 worker open")
    await closeDownTo(1)
    atOne.push(...(await calls("again_")))
  } finally {
    await closeDownTo(0)
  }
  const largest = measured[measured.length - 1]!
  return { sizes: measured, callRatio: largest.call.median / median(atOne) }
}
