/**
 * An operator's view of a host: three workers under a small load, the host's metrics on a real Prometheus endpoint
 * (`@effect/opentelemetry` and the OpenTelemetry Prometheus exporter, on 127.0.0.1), and the host's view of its
 * workers (`HostView`) as a table refreshed every second. Ends on Ctrl-C, or by itself after `--duration`.
 *
 * Run: npm run example:observability [-- --duration 10s]
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { HostView, NodeMcpWorkers } from "@mcp-worker/node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { exampleServer } from "../config.js"
import { prometheus, samplesOf, valueOf } from "./prometheus.js"

/** `--duration 10s` (or `500ms`, `2m`, `10 seconds`): how long to run; absent, until Ctrl-C. */
const durationArgument = (): Effect.Effect<Option.Option<Duration.Duration>, Error> => {
  const at = process.argv.indexOf("--duration")
  if (at < 0) return Effect.succeed(Option.none())
  const text = process.argv[at + 1] ?? ""
  const short = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text)
  const unit = (short?.[2] ?? "s") as "ms" | "s" | "m"
  const duration = short
    ? Option.some(Duration.millis(Number(short[1]) * { ms: 1, s: 1000, m: 60_000 }[unit]))
    : Duration.decodeUnknown(text)
  return Option.isSome(duration)
    ? Effect.succeed(duration)
    : Effect.fail(new Error(`--duration ${JSON.stringify(text)} is not a duration (say 10s, 500ms, 2m)`))
}

const cell = (value: string, width: number) => value.slice(0, width).padEnd(width)

const render = (url: string, rows: ReadonlyArray<HostView.WorkerRow>): string => {
  const header = ["worker", "name", "state", "busy", "ok", "isError", "error", "not_sent", "unknown", "RSS", "CPU"]
  const widths = [24, 18, 7, 24, 5, 8, 6, 9, 8, 9, 7]
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => cell(c, widths[i]!)).join(" ")
  const body = rows.map((row) =>
    line([
      row.workerId,
      row.name ?? row.server ?? "-",
      row.state,
      row.busy === null ? "-" : `${row.busy.requestId.slice(0, 12)} ${row.busy.forMs ?? "?"} ms`,
      String(row.requests?.results ?? "-"),
      String(row.requests?.isError ?? "-"),
      String(row.requests?.errors ?? "-"),
      String(row.requests?.notSent ?? "-"),
      String(row.requests?.unknown ?? "-"),
      row.tree === null ? "-" : `${(row.tree.rssBytes / 1024 / 1024).toFixed(1)} MiB`,
      row.tree === null ? "-" : `${row.tree.cpuSeconds.toFixed(2)} s`
    ])
  )
  return [`metrics: ${url}`, "", line(header), ...body, ""].join("\n")
}

/** The load: `counter` every 100 ms; `busy`, a slow tool another caller finds busy; `timeouts`, past its timeout. */
const load = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const forever = <A, E>(effect: Effect.Effect<A, E>, every: Duration.DurationInput) =>
      Effect.forkScoped(Effect.repeat(Effect.ignore(effect), Schedule.spaced(every)))
    yield* forever(workers.callTool(ids[0]!, "increment"), "100 millis")
    yield* forever(workers.callTool(ids[1]!, "slow", { ms: 400 }), "10 millis")
    yield* forever(workers.callTool(ids[1]!, "add_note", { text: "busy?" }), "150 millis")
    yield* forever(workers.callTool(ids[2]!, "slow", { ms: 300 }, { timeout: "100 millis" }), "400 millis")
  })

const program = Effect.gen(function* () {
  const duration = yield* durationArgument()
  const { endpoint, layer } = yield* prometheus("mcp-worker-example")
  yield* Layer.build(layer)
  yield* Effect.gen(function* () {
    const workers = yield* McpWorkers
    const view = yield* HostView.HostView
    // Named for what the load does to each: the name labels its metrics and its row.
    const ids = yield* Effect.forEach(
      ["counter", "busy", "timeouts"],
      (name) => workers.open(exampleServer, { name }),
      {
        concurrency: "unbounded"
      }
    )
    yield* load(ids)
    const refresh = Effect.flatMap(view.snapshot, (rows) =>
      Effect.sync(() => {
        if (process.stdout.isTTY) process.stdout.write("\x1b[2J\x1b[H")
        process.stdout.write(`${render(endpoint.url, rows)}\n`)
      })
    )
    const table = Effect.repeat(refresh, Schedule.spaced("1 second"))
    yield* Option.match(duration, {
      onNone: () => table,
      onSome: (duration) => Effect.timeout(table, duration).pipe(Effect.ignore)
    })
  }).pipe(Effect.scoped, Effect.provide(NodeMcpWorkers.layerWithView({ treeSampleInterval: "1 second" })))
  // After every worker closed: what the exporter says of the whole run.
  const samples = samplesOf(yield* endpoint.scrape)
  const outcome = (name: string) => valueOf(samples, "mcp_worker_requests_total", { mcp_worker_outcome: name })
  process.stdout.write(
    `requests: result ${outcome("result")}, WorkerBusy ${outcome("WorkerBusy")}, ` +
      `DeliveryUnknown ${outcome("DeliveryUnknown")}; closes ${valueOf(samples, "mcp_worker_close_duration_seconds_count")}\n`
  )
})

NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))
