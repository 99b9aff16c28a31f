/**
 * The workers' metrics, as Effect `Metric`s of the host's runtime: whatever exporter of `@effect/opentelemetry` the
 * host installs carries them. Each is recorded in the host, where the truth of a request, an open or a close is known
 * (an owner thread or process tells the host everything it records here on its data plane). Label values are bounded:
 * operations, surfaces, outcomes and states come from fixed lists; a server's name is cut to a fixed length; never an
 * argument, a value or a secret (C24, C80).
 *
 * @internal
 */
import { InvalidInput, type McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

/** Where a request came from: the host's own fibers, a remote thread, a peer of the listener's socket. @internal */
export type Surface = "host" | "thread" | "socket"

/** How a request ended: its result, a result with `isError`, or the tag of the error its caller got. @internal */
export type Outcome = "result" | "is_error" | McpWorkerError["_tag"]

// OpenTelemetry's advice for the MCP operation duration, in seconds.
const durationBoundaries = MetricBoundaries.fromIterable([
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300
])

/** Each metric's name, the one place it is written. @internal */
export const nameOf = {
  requests: "mcp_worker.requests",
  duration: "mcp.client.operation.duration",
  inFlight: "mcp_worker.requests.in_flight",
  workers: "mcp_worker.workers",
  openDuration: "mcp_worker.open.duration",
  closeDuration: "mcp_worker.close.duration",
  cleanups: "mcp_worker.cleanups",
  notificationsDropped: "mcp_worker.notifications.dropped",
  spills: "mcp_worker.spills",
  spillBytes: "mcp_worker.spill.size",
  memory: "process.memory.usage",
  cpu: "process.cpu.time"
} as const

/** Every metric's name. @internal */
export const names: ReadonlyArray<string> = Object.values(nameOf)

/**
 * Every metric, by name. Names and units follow the OpenTelemetry semantic conventions where one exists
 * (`mcp.client.operation.duration`, `process.memory.usage`, `process.cpu.time`); the rest are `mcp_worker.*`.
 *
 * @internal
 */
export const metrics = {
  requests: Metric.counter(nameOf.requests, {
    description: "Requests by operation and outcome (result, is_error, or the error's tag with its delivery)",
    incremental: true
  }),
  duration: Metric.histogram(nameOf.duration, durationBoundaries, "Duration of a request, sent to its end"),
  inFlight: Metric.counter(nameOf.inFlight, { description: "Requests sent and not yet ended" }),
  workers: Metric.gauge(nameOf.workers, { description: "Workers of the host, by state" }),
  openDuration: Metric.histogram(nameOf.openDuration, durationBoundaries, "Duration of an open, whatever its outcome"),
  closeDuration: Metric.histogram(
    nameOf.closeDuration,
    durationBoundaries,
    "Duration of a close, whatever its outcome"
  ),
  cleanups: Metric.counter(nameOf.cleanups, {
    description: "Cleanups of a worker's processes: confirmed, or processes left",
    incremental: true
  }),
  notificationsDropped: Metric.counter(nameOf.notificationsDropped, {
    description: "Server notifications dropped for a full subscriber",
    incremental: true
  }),
  spills: Metric.counter(nameOf.spills, {
    description: "Results past maxResultBytes spilled to a file",
    incremental: true
  }),
  spillBytes: Metric.counter(nameOf.spillBytes, { description: "Bytes of the spilled results", incremental: true }),
  memory: Metric.gauge(nameOf.memory, { description: "Resident memory of a worker's server process tree" }),
  cpu: Metric.gauge(nameOf.cpu, { description: "CPU time of a worker's server process tree, user and system" })
} as const

/**
 * The unit of the metrics that have one, as the `unit` label the exporter reads (UCUM, as OpenTelemetry writes it).
 * A label of each cached array, not `Metric.tagged`: that makes a new array per update, and Effect caches a metric's
 * hook by its array, so every update would hash the whole key again (9 µs a request, measured).
 */
const unitLabels = {
  s: MetricLabel.make("unit", "s"),
  By: MetricLabel.make("unit", "By")
} as const

/** The label arrays of one server name, made once each: Effect caches a metric's hook by the array itself. */
interface Labels {
  readonly byKey: Map<string, ReadonlyArray<MetricLabel.MetricLabel>>
  readonly server: string
}

const labelsByServer = new Map<string, Labels>()

/** The longest server name a label carries, and the longest name an open may give a worker. @internal */
export const maxNameLength = 64

/** `open`'s `name`, checked where the open is called: 1 to 64 characters, or absent. @internal */
export const openNameOf = (
  options: { readonly name?: unknown } | undefined
): Either.Either<string | undefined, InvalidInput> => {
  const name = options?.name
  if (name === undefined) return Either.right(undefined)
  return typeof name === "string" && name.length > 0 && name.length <= maxNameLength
    ? Either.right(name)
    : Either.left(
        new InvalidInput({
          where: "config",
          path: "options.name",
          message: `name must be a string of 1 to ${maxNameLength} characters`,
          delivery: "not_sent"
        })
      )
}

/** A server's name as a label value: the name it reported (data, C25), cut short; `unknown` before it said one. */
export const serverLabel = (name: string | undefined): string =>
  name === undefined || name.length === 0 ? "unknown" : name.slice(0, maxNameLength)

/**
 * The server label of a worker: the name its open gave it, else the name its server reported.
 *
 * @internal
 */
export const serverOf = (worker: {
  readonly name?: string | undefined
  readonly server: { readonly name: string } | null
}): string => serverLabel(worker.name ?? worker.server?.name)

const labelsOf = (server: string): Labels => {
  let labels = labelsByServer.get(server)
  if (labels === undefined) {
    labels = { byKey: new Map(), server }
    labelsByServer.set(server, labels)
  }
  return labels
}

const tags = (
  server: string,
  key: string,
  pairs: ReadonlyArray<readonly [string, string]>,
  unit?: keyof typeof unitLabels
) => {
  const labels = labelsOf(server)
  let found = labels.byKey.get(key)
  if (found === undefined) {
    found = [
      ...(unit === undefined ? [] : [unitLabels[unit]]),
      MetricLabel.make("mcp_worker.server", server),
      ...pairs.map(([k, v]) => MetricLabel.make(k, v))
    ]
    labels.byKey.set(key, found)
  }
  return found
}

/**
 * Records a request's end. `seconds`: from the send to the end, `undefined` for a request refused before it was sent;
 * `spilled`: the bytes of a spilled result. Positional, with no object made: this runs on every request.
 *
 * @internal
 */
export const requestEnded = (
  server: string,
  surface: Surface,
  method: OwnerProtocol.Method,
  outcome: Outcome,
  delivery: "delivered" | "not_sent" | "unknown",
  seconds: number | undefined,
  spilled: number | undefined
): void => {
  metrics.requests.unsafeUpdate(
    1,
    tags(server, `r|${surface}|${method}|${outcome}|${delivery}`, [
      ["mcp_worker.surface", surface],
      ["mcp.method.name", method],
      ["mcp_worker.outcome", outcome],
      ["mcp_worker.delivery", delivery]
    ])
  )
  if (seconds === undefined) return
  metrics.inFlight.unsafeUpdate(-1, tags(server, `f|${surface}`, [["mcp_worker.surface", surface]]))
  metrics.duration.unsafeUpdate(
    seconds,
    tags(
      server,
      `d|${surface}|${method}|${outcome}`,
      [
        ["mcp_worker.surface", surface],
        ["mcp.method.name", method],
        ["mcp_worker.outcome", outcome]
      ],
      "s"
    )
  )
  if (spilled === undefined) return
  metrics.spills.unsafeUpdate(1, tags(server, "s", []))
  metrics.spillBytes.unsafeUpdate(spilled, tags(server, "b", [], "By"))
}

/** A request was sent to its owner. @internal */
export const requestSent = (server: string, surface: Surface): void =>
  metrics.inFlight.unsafeUpdate(1, tags(server, `f|${surface}`, [["mcp_worker.surface", surface]]))

/** An open ended: `outcome` is `ready` or the failure's stage. @internal */
export const opened = (server: string, outcome: string, seconds: number): void =>
  metrics.openDuration.unsafeUpdate(seconds, tags(server, `o|${outcome}`, [["mcp_worker.outcome", outcome]], "s"))

/** A close ended: `closed`, or `CloseFailed` when processes were left. @internal */
export const closed = (server: string, outcome: "closed" | "CloseFailed", seconds: number): void =>
  metrics.closeDuration.unsafeUpdate(seconds, tags(server, `c|${outcome}`, [["mcp_worker.outcome", outcome]], "s"))

/** A cleanup was confirmed, or found processes left. @internal */
export const cleanedUp = (server: string, outcome: "confirmed" | "processes_left"): void =>
  metrics.cleanups.unsafeUpdate(1, tags(server, `k|${outcome}`, [["mcp_worker.outcome", outcome]]))

/** A notification was dropped for a subscriber that was full. @internal */
export const notificationDropped = (server: string): void =>
  metrics.notificationsDropped.unsafeUpdate(1, tags(server, "n", []))

/** The number of workers in each state, set whenever one changes. @internal */
export const workersIn = (server: string, state: string, count: number): void =>
  metrics.workers.unsafeUpdate(count, tags(server, `w|${state}`, [["mcp_worker.state", state]]))

/**
 * A sample of the server trees of one server name: resident memory (bytes) and CPU time (seconds), summed over its
 * open workers, so that the labels stay as few as the names.
 *
 * @internal
 */
export const treesSampled = (server: string, rssBytes: number, cpuSeconds: number): void => {
  metrics.memory.unsafeUpdate(rssBytes, tags(server, "m", [], "By"))
  metrics.cpu.unsafeUpdate(cpuSeconds, tags(server, "u", [], "s"))
}

/** Every server name recorded so far, for a count that must fall back to zero. @internal */
export const knownServers = (): Iterable<string> => labelsByServer.keys()
