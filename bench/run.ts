// `npm run bench`: mcp-worker against the MCP SDK `Client` + `StdioClientTransport` used directly in the calling
// thread, on the same fixture server, in one run. Prints a table (stdout), then one JSON object (stdout);
// progress goes to stderr. Targets: docs/contract.md#performance-targets. See docs/benchmarks.md.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import type { StdioConfigInput } from "@mcp-worker/core/ServerConfig"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import type { StdioServer } from "./loops.js"
import { benchProcesses, killAll, machine, runVariable } from "./procs.js"
import { type ProfileResult, profileRow } from "./profile.js"
import { openTimeline, renderTimeline, type Timeline } from "./openTimeline.js"
import * as Rows from "./rows.js"
import { type Comparison, fmtMs, fmtRatio, fmtUs, round, type Summary, table } from "./stats.js"
import { bundleEntries } from "./threads.js"

const started = performance.now()
const progress = (line: string) =>
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${line}\n`)

// `global.gc` without a command-line flag: the RSS row compares heaps after a full collection.
const gc: () => void =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    v8.setFlagsFromString("--expose-gc")
    return vm.runInNewContext("gc") as () => void
  })()

const runId = `bench_${crypto.randomBytes(6).toString("hex")}`
// Every server of this run carries the run id, so the leak check counts exactly our processes. The fixture
// exits on stdin EOF, so the SDK's own polite close is prompt (it waits 2 s for servers that ignore EOF).
// (test/fixtures/servers.ts `statefulConfig` says the same; bench/tsconfig.json does not include test/, so the
// path is spelled out here.)
const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/dist/stateful.mjs")
const server: StdioServer = {
  command: process.execPath,
  args: [fixture, "--exit-on-stdin-eof"],
  env: { [runVariable]: runId }
}
const config: StdioConfigInput = { command: server.command, args: [...server.args], env: { ...server.env } }

/** `NodeMcpWorkers.layerRemote` is being written concurrently; the remote row is measured once it exists. */
const layerRemote = (NodeMcpWorkers as unknown as { layerRemote?: unknown }).layerRemote
const remoteAvailable = layerRemote !== undefined && Layer.isLayer(layerRemote)

interface Results {
  call?: Comparison
  callV2?: Comparison
  remote?: Rows.RemoteRow
  open?: Rows.OpenRow
  /** `open` with the default `protocol: "auto"` against `"legacy"`: the era probe's share. */
  probe?: Comparison
  payload?: Comparison
  cancel?: Rows.CancelRow
  rss?: Rows.RssRow
  fanOut?: Rows.FanOutRow
  profile?: ProfileResult
  clientCall?: Rows.ClientCallRow
  clientOpen?: Rows.OpenRow
  isolation?: Rows.IsolationRow
  idle?: Rows.IdleRow
  /** Where one open's time goes (`BENCH_ROWS=open`): medians of stamps from the open's call, in ms. */
  timeline?: Timeline
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
const verdict = (ok: boolean) => (ok ? "ok" : "MISS")

/** One comparison's row: its medians, its ratio, and its verdict against `max` (without one, information). */
const comparisonRow = (label: string, c: Comparison, format: (s: Summary) => string, max?: number): Array<string> => [
  label,
  max === undefined ? "" : `≤ ${max.toFixed(2)}×`,
  format(c.variant),
  format(c.direct),
  fmtRatio(c),
  max === undefined ? "(info)" : verdict(c.ratio <= max)
]

const render = (r: Results): string => {
  const rows: Array<Array<string>> = []
  if (r.call) rows.push(comparisonRow("callTool echo, stdio, host thread", r.call, fmtUs, 1.15))
  if (r.callV2) rows.push(comparisonRow("  same, vs the SDK v2 client (the owner's) directly", r.callV2, fmtUs))
  if (r.remote) {
    const { vsThreadDirect: t, vsMainDirect: m } = r.remote
    if (t === undefined || m === undefined) {
      rows.push(["callTool echo, remote worker_thread", "≤ 1.30×", r.remote.note ?? "n/a", "", "", ""])
    } else {
      rows.push([
        "callTool echo, remote worker_thread",
        "≤ 1.30×",
        fmtUs(t.variant),
        `${fmtUs(t.direct)} in that thread`,
        fmtRatio(t),
        verdict(t.ratio <= 1.3)
      ])
      rows.push(["  same, vs direct in main thread", "", "", fmtUs(m.direct), fmtRatio(m), "(info)"])
      if (r.remote.hostActiveUs !== undefined) {
        rows.push([
          "  host thread busy per remote call",
          "",
          `${r.remote.hostActiveUs.toFixed(0)} µs`,
          "",
          "",
          "(info)"
        ])
      }
    }
  }
  if (r.open) {
    const c = r.open.comparison
    rows.push(comparisonRow("open → ready vs connect", c, fmtMs, 1.25))
    rows.push(["  close (not in the ratio)", "", fmtMs(r.open.workerClose), fmtMs(r.open.directClose), "", "(info)"])
  }
  if (r.probe) rows.push(comparisonRow("  auto (the era probe) vs legacy", r.probe, fmtMs))
  if (r.clientCall) {
    const { call, floor, overFloor, overV2 } = r.clientCall
    rows.push(
      comparisonRow("McpClient callTool echo, same thread", call, fmtUs, 1.05),
      comparisonRow("  floor: SDK in Effect.async vs SDK", floor, fmtUs),
      comparisonRow("  McpClient vs SDK in Effect.async", overFloor, fmtUs, 1.1),
      comparisonRow("  McpClient vs the SDK v2 client it wraps, in Effect.async", overV2, fmtUs)
    )
  }
  if (r.clientOpen) {
    const c = r.clientOpen.comparison
    rows.push(comparisonRow("McpClient open vs connect", c, fmtMs, 1.1))
    rows.push([
      "  close (not in the ratio)",
      "",
      fmtMs(r.clientOpen.workerClose),
      fmtMs(r.clientOpen.directClose),
      "",
      "(info)"
    ])
  }
  if (r.rss) {
    const w = mean(r.rss.worker)
    const d = mean(r.rss.direct)
    const each = (xs: ReadonlyArray<number>) => xs.map((x) => x.toFixed(1)).join(", ")
    rows.push([
      `RSS per open worker (N=${r.rss.n})`,
      // The target's floor, a thread holding a connected v2 client, is measured by `npm run bench:parts`.
      "floor + 4 MiB",
      `${w.toFixed(1)} MiB (rounds ${each(r.rss.worker)})`,
      `${d.toFixed(1)} MiB (rounds ${each(r.rss.direct)})`,
      "",
      "(bench:parts)"
    ])
  }
  if (r.payload) rows.push(comparisonRow("1 MiB result", r.payload, fmtMs, 1.3))
  if (r.cancel) {
    rows.push([
      "interrupt → server handler aborted",
      "≤ 5 ms median",
      fmtMs(r.cancel.worker, 2),
      fmtMs(r.cancel.direct, 2),
      "",
      verdict(r.cancel.worker.median <= 5)
    ])
    rows.push([
      "  → cancel line received",
      "",
      fmtMs(r.cancel.workerReceived, 2),
      fmtMs(r.cancel.directReceived, 2),
      "",
      "(info)"
    ])
  }
  if (r.isolation) {
    // No target: what crossing a process boundary costs, the thread owner in the baseline column.
    const i = r.isolation
    rows.push([
      "callTool echo, owner process vs owner thread",
      "report",
      fmtUs(i.call.variant),
      `${fmtUs(i.call.direct)} (thread)`,
      fmtRatio(i.call),
      "(info)"
    ])
    rows.push([
      "callTool 1 MiB, owner process vs owner thread",
      "report",
      fmtMs(i.payload.variant),
      `${fmtMs(i.payload.direct)} (thread)`,
      fmtRatio(i.payload),
      "(info)"
    ])
    rows.push([
      "open → ready, owner process vs owner thread",
      "report",
      fmtMs(i.open.variant),
      `${fmtMs(i.open.direct)} (thread)`,
      fmtRatio(i.open),
      "(info)"
    ])
  }
  if (r.fanOut) {
    const f = r.fanOut
    const phases = (p: Rows.FanOutPhases) =>
      `${Math.round(p.total)} ms (open ${Math.round(p.open)} / call ${Math.round(p.call)} / close ${Math.round(p.close)})`
    const left = [...f.worker, ...f.direct, ...f.floor].reduce((n, p) => n + p.left.length, 0)
    rows.push([
      `fan-out ${f.n}: open, 1 call, close`,
      "0 processes left",
      f.worker.map(phases).join("; "),
      f.direct.map(phases).join("; "),
      `${f.ratio.toFixed(2)}×`,
      left === 0 ? "ok (0 left)" : `FAIL (${left} left)`
    ])
    rows.push([
      `  vs ${f.n} bare threads, each the SDK v2 client`,
      "≤ 1.20×",
      "",
      f.floor.map(phases).join("; "),
      `${f.floorRatio.toFixed(2)}×`,
      verdict(f.floorRatio <= 1.2)
    ])
  }
  if (r.idle) {
    for (const size of r.idle.sizes) {
      rows.push([
        `${size.n} idle worker(s) open: callTool on one`,
        size.n === r.idle.sizes[r.idle.sizes.length - 1]!.n ? "≤ 1.05× (vs 1)" : "",
        fmtUs(size.call),
        "",
        size.n === r.idle.sizes[r.idle.sizes.length - 1]!.n ? `${r.idle.callRatio.toFixed(2)}×` : "",
        size.n === r.idle.sizes[r.idle.sizes.length - 1]!.n ? verdict(r.idle.callRatio <= 1.05) : "(info)"
      ])
      rows.push([
        "  host RSS per worker; host busy per idle worker, added per worker (host GC)",
        // The first workers' added time holds the pass over the machine's other processes; only the largest step is
        // a statement about a worker.
        size.n === r.idle.sizes[r.idle.sizes.length - 1]!.n ? "linear; ≤ 5 µs/s added" : "",
        `${size.rssPerWorker.toFixed(1)} MiB; ${size.hostActiveUsPerWorkerS.toFixed(2)} µs/s, ` +
          `${size.addedUsPerWorkerS.toFixed(2)} µs/s (${size.gcMs.toFixed(1)} ms)`,
        "",
        "",
        size.n === r.idle.sizes[r.idle.sizes.length - 1]!.n ? verdict(size.addedUsPerWorkerS <= 5) : "(info)"
      ])
    }
  }
  return table(["measure", "target", "mcp-worker median (p10–p90)", "direct SDK median (p10–p90)", "ratio", ""], rows)
}

const renderProfile = (p: ProfileResult): string => {
  const rows: Array<Array<string>> = []
  const section = (name: string, splits: Record<string, Summary>) => {
    for (const [k, s] of Object.entries(splits)) rows.push([`${name} ${k}`, fmtUs(s)])
  }
  section("direct SDK, main thread:", p.directMain)
  section("direct SDK, worker thread:", p.directThread)
  section("host path (real):", p.host)
  if (p.realOwner) section("host path (real): flight →", p.realOwner)
  else rows.push(["host path (real): flight split", "n/a (owner entry not instrumentable)"])
  section("replica owner:", p.owner)
  section("bare hop to an idle thread:", p.hop)
  return table([`profile, tiny echo (${p.calls} calls each)`, "median (p10–p90)"], rows)
}

/** Where the host-thread overhead goes, from the profile's medians (µs; medians do not add up exactly). */
const attribute = (p: ProfileResult) => {
  const us = (x: number) => Math.round(x * 1000)
  const m = (s: Summary) => s.median
  const overhead = m(p.host.total) - m(p.directMain.total)
  const hostJs = m(p.host.pre) + m(p.host.decode) + m(p.host.resume)
  const hops = p.realOwner ? m(p.realOwner.hops) : Number.NaN
  const ownerVsDirect = p.realOwner ? m(p.realOwner.owner) - m(p.directMain.total) : Number.NaN
  const ownerJs = m(p.owner.pre) + m(p.owner.post) - (m(p.directMain.pre) + m(p.directMain.post))
  const ownerPipe = m(p.owner.pipe) - m(p.directMain.pipe)
  const realVsReplica = p.realOwner ? m(p.realOwner.owner) - m(p.owner.owner) : Number.NaN
  return {
    overheadUs: us(overhead),
    hostJsUs: us(hostJs),
    hopsUs: us(hops),
    ownerMinusDirectUs: us(ownerVsDirect),
    ownerJsExtraUs: us(ownerJs),
    ownerPipeExtraUs: us(ownerPipe),
    realOwnerMinusReplicaUs: us(realVsReplica)
  }
}

const renderAttribution = (a: ReturnType<typeof attribute>): string =>
  [
    `host-thread overhead over direct ≈ ${a.overheadUs} µs per call:`,
    `  host-side JS (validate + encode + requestId + Effect.async; decode + settle; resume) ≈ ${a.hostJsUs} µs`,
    `  two thread hops (host → owner → host, flight − owner time) ≈ ${a.hopsUs} µs`,
    `  owner's SDK call − the same call made directly ≈ ${a.ownerMinusDirectUs} µs, of which (replica):`,
    `    owner-side JS beyond the SDK's own (Schema decode, JSON.parse/stringify, post) ≈ ${a.ownerJsExtraUs} µs`,
    `    stdin → stdout round trip slower for the owner than for a direct call ≈ ${a.ownerPipeExtraUs} µs`,
    `    real owner − replica (library stdio transport + process job, the code-cache-loaded runtime) ≈ ${a.realOwnerMinusReplicaUs} µs`
  ].join("\n")

// JSON: every number in ms (RSS in MiB), rounded.
const jsonReplacer = (_key: string, value: unknown) => (typeof value === "number" ? round(value, 4) : value)

const main = async () => {
  progress(`run ${runId}: bundling the bench threads`)
  const bundles = await bundleEntries()
  const runtime = ManagedRuntime.make(Layer.merge(NodeMcpWorkers.layer(), Logger.minimumLogLevel(LogLevel.Warning)))
  const results: Results = {}
  let failure: unknown
  try {
    const workers = await runtime.runPromise(McpWorkers)
    const ctx: Rows.Context = { runtime, workers, server, config, runId, progress, gc }
    const only = process.env.BENCH_ROWS
    // `BENCH_ROWS=client` measures the McpClient rows alone, `BENCH_ROWS=isolation` the owner-process rows. They run
    // last otherwise: their blocks would warm code paths before the host-thread rows, and those ratios must stay
    // comparable run to run.
    if (only === undefined) {
      const pair = await Rows.openPair(ctx)
      try {
        Object.assign(results, await Rows.callRows(ctx, pair))
        results.remote = remoteAvailable
          ? await Rows.remoteRow(ctx, pair, bundles.remote)
          : { available: false, note: "n/a (layerRemote not available)" }
        results.payload = await Rows.payloadRow(ctx, pair)
        results.cancel = await Rows.cancelRow(ctx, pair)
      } finally {
        await Rows.closePair(ctx, pair)
      }
      results.open = await Rows.openRow(ctx)
      results.probe = await Rows.probeRow(ctx)
      results.rss = await Rows.rssRow(ctx)
      results.profile = await profileRow(ctx, bundles.probe, server)
      results.fanOut = await Rows.fanOutRow(ctx, bundles.floor, 32, 2)
    }
    // `BENCH_ROWS=remote`: the remote-thread row alone (with `BENCH_PROFILE_DIR`, the host's profile over its blocks).
    if (only === "remote" && remoteAvailable) {
      const pair = await Rows.openPair(ctx)
      try {
        results.remote = await Rows.remoteRow(ctx, pair, bundles.remote)
      } finally {
        await Rows.closePair(ctx, pair)
      }
    }
    // `BENCH_ROWS=open`: the open rows alone, then the timeline of one open against one connect.
    if (only === "open") {
      results.open = await Rows.openRow(ctx)
      results.probe = await Rows.probeRow(ctx)
      results.timeline = await openTimeline(ctx)
    }
    // `BENCH_ROWS=call`: the host-thread call rows alone.
    if (only === "call") {
      const pair = await Rows.openPair(ctx)
      try {
        Object.assign(results, await Rows.callRows(ctx, pair))
      } finally {
        await Rows.closePair(ctx, pair)
      }
    }
    if (only === "fanout") results.fanOut = await Rows.fanOutRow(ctx, bundles.floor, 32, 3)
    if (only === undefined || only === "client") {
      results.clientCall = await Rows.clientCallRow(ctx)
      results.clientOpen = await Rows.clientOpenRow(ctx)
    }
    if (only === undefined || only === "isolation") results.isolation = await Rows.isolationRow(ctx)
    // Last, and alone with `BENCH_ROWS=idle`: 128 owners and their servers take minutes and gigabytes to come and go.
    if (only === undefined || only === "idle") results.idle = await Rows.idleRow(ctx)
  } catch (error) {
    failure = error
  } finally {
    progress("disposing the runtime")
    await runtime.dispose()
    bundles.remove()
  }

  const leftover = benchProcesses(runId)
  killAll(leftover)
  const fanOutLeft = results.fanOut
    ? [...results.fanOut.worker, ...results.fanOut.direct, ...results.fanOut.floor].flatMap((p) => p.left)
    : []

  process.stdout.write(`\n${render(results)}\n\n`)
  if (results.timeline)
    process.stdout.write(`open timeline (medians, ms from the call):\n${renderTimeline(results.timeline)}\n\n`)
  const attribution = results.profile ? attribute(results.profile) : null
  if (results.profile && attribution) {
    process.stdout.write(`${renderProfile(results.profile)}\n\n${renderAttribution(attribution)}\n\n`)
  }
  const m = machine()
  const json = {
    runId,
    machine: m,
    durationS: (performance.now() - started) / 1000,
    units: "ms (rss: MiB per worker/client)",
    remoteAvailable,
    ...results,
    attribution,
    leftoverProcesses: leftover,
    error:
      failure === undefined ? null : String(failure instanceof Error ? (failure.stack ?? failure.message) : failure)
  }
  process.stdout.write(`${JSON.stringify(json, jsonReplacer)}\n`)

  if (failure !== undefined) {
    process.stderr.write(`\nBENCH FAILED: ${String(failure instanceof Error ? failure.stack : failure)}\n`)
    process.exitCode = 1
  }
  if (fanOutLeft.length > 0 || leftover.length > 0) {
    const all = [...fanOutLeft, ...leftover]
    process.stderr.write(
      `\nBENCH FAILED: ${all.length} fixture process(es) of this run were still alive (killed now):\n` +
        all.map((p) => `  ${p.pid} ${p.cmdline}`).join("\n") +
        "\n"
    )
    process.exitCode = 1
  }
  progress(`done on ${m.nproc} × ${m.cpu}, Node ${m.node}`)
  // The bench must end by itself; if a handle keeps it alive, say which and fail instead of hanging.
  setTimeout(() => {
    process.stderr.write(
      `BENCH FAILED: still running 10 s after the end: ${process.getActiveResourcesInfo().join(", ")}\n`
    )
    process.exit(1)
  }, 10_000).unref()
}

// The listener rows, the flood rows, the metrics row and the fresh-run rows run alone: they start hosts of their own
// (and sandbox processes: `flood` starts a flooding peer and a measuring one, `fresh` a new sandbox per sample).
if (process.env.BENCH_ROWS === "listen") await import("./listen.js")
else if (process.env.BENCH_ROWS === "fresh") await import("./fresh.js")
else if (process.env.BENCH_ROWS === "flood") await import("./flood.js")
else if (process.env.BENCH_ROWS === "metrics") await import("./metrics.js")
else await main()
