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

/**
 * Where a request came from: the host's own fibers, a remote thread, a peer of the listener's socket, a client of
 * the gateway. @internal
 */
export type Surface = "host" | "thread" | "socket" | "gateway"

/** How a request ended: its result, a result with `isError`, or the tag of the error its caller got. @internal */
export type Outcome = "result" | "is_error" | McpWorkerError["_tag"]

// OpenTelemetry's advice for the MCP operation duration, in seconds.
const durationBoundaries = MetricBoundaries.fromIterable([
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300
])

const label = {
  server: "mcp_worker.server",
  surface: "mcp_worker.surface",
  method: "mcp.method.name",
  outcome: "mcp_worker.outcome",
  delivery: "mcp_worker.delivery",
  state: "mcp_worker.state"
} as const
const { delivery, method, outcome, server, state, surface } = label

/**
 * Each metric, the one place it is written: its OpenTelemetry name (the MCP semantic conventions' where one exists,
 * `mcp.client.operation.duration`, and `process.memory.usage`, `process.cpu.time`; else `mcp_worker.*`), its UCUM unit
 * and its labels. @internal
 */
export const specs = {
  requests: { name: "mcp_worker.requests", unit: undefined, labels: [server, surface, method, outcome, delivery] },
  duration: { name: "mcp.client.operation.duration", unit: "s", labels: [server, surface, method, outcome] },
  inFlight: { name: "mcp_worker.requests.in_flight", unit: undefined, labels: [server, surface] },
  workers: { name: "mcp_worker.workers", unit: undefined, labels: [server, state] },
  openDuration: { name: "mcp_worker.open.duration", unit: "s", labels: [server, outcome] },
  closeDuration: { name: "mcp_worker.close.duration", unit: "s", labels: [server, outcome] },
  cleanups: { name: "mcp_worker.cleanups", unit: undefined, labels: [server, outcome] },
  notificationsDropped: { name: "mcp_worker.notifications.dropped", unit: undefined, labels: [server] },
  spills: { name: "mcp_worker.spills", unit: undefined, labels: [server] },
  spillBytes: { name: "mcp_worker.spill.size", unit: "By", labels: [server] },
  memory: { name: "process.memory.usage", unit: "By", labels: [server] },
  cpu: { name: "process.cpu.time", unit: "s", labels: [server] }
} as const satisfies {
  readonly [key: string]: {
    readonly name: string
    readonly unit: "s" | "By" | undefined
    readonly labels: ReadonlyArray<string>
  }
}

// C120: an Effect metric carries no unit an exporter reads except as a label, which Prometheus would keep on every
// series; so the unit is in the name, as OpenTelemetry's rule for Prometheus writes it (`_seconds`, `_bytes`).
const unitWords = { s: "seconds", By: "bytes" } as const

const exportedName = (spec: { readonly name: string; readonly unit: "s" | "By" | undefined }): string =>
  spec.unit === undefined ? spec.name : `${spec.name}_${unitWords[spec.unit]}`

/** Each metric's name as its exporter is given it. @internal */
export const nameOf = Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, exportedName(spec)])) as {
  readonly [K in keyof typeof specs]: string
}

/** Every metric's name. @internal */
export const names: ReadonlyArray<string> = Object.values(nameOf)

/** Every metric's labels, by its name. @internal */
export const labelsOf: { readonly [name: string]: ReadonlyArray<string> } = Object.fromEntries(
  Object.entries(specs).map(([key, spec]) => [nameOf[key as keyof typeof specs], spec.labels])
)

/**
 * Every metric, by name.
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

const labelsByName = (serverName: string): Labels => {
  let labels = labelsByServer.get(serverName)
  if (labels === undefined) {
    labels = { byKey: new Map(), server: serverName }
    labelsByServer.set(serverName, labels)
  }
  return labels
}

const tags = (serverName: string, key: string, pairs: ReadonlyArray<readonly [string, string]>) => {
  const labels = labelsByName(serverName)
  let found = labels.byKey.get(key)
  if (found === undefined) {
    found = [MetricLabel.make(label.server, serverName), ...pairs.map(([k, v]) => MetricLabel.make(k, v))]
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
      [label.surface, surface],
      [label.method, method],
      [label.outcome, outcome],
      [label.delivery, delivery]
    ])
  )
  if (seconds === undefined) return
  metrics.inFlight.unsafeUpdate(-1, tags(server, `f|${surface}`, [[label.surface, surface]]))
  metrics.duration.unsafeUpdate(
    seconds,
    tags(server, `d|${surface}|${method}|${outcome}`, [
      [label.surface, surface],
      [label.method, method],
      [label.outcome, outcome]
    ])
  )
  if (spilled === undefined) return
  metrics.spills.unsafeUpdate(1, tags(server, "s", []))
  metrics.spillBytes.unsafeUpdate(spilled, tags(server, "b", []))
}

/** A request was sent to its owner. @internal */
export const requestSent = (server: string, surface: Surface): void =>
  metrics.inFlight.unsafeUpdate(1, tags(server, `f|${surface}`, [[label.surface, surface]]))

/** An open ended: `outcome` is `ready` or the failure's stage. @internal */
export const opened = (server: string, outcome: string, seconds: number): void =>
  metrics.openDuration.unsafeUpdate(seconds, tags(server, `o|${outcome}`, [[label.outcome, outcome]]))

/** A close ended: `closed`, or `CloseFailed` when processes were left. @internal */
export const closed = (server: string, outcome: "closed" | "CloseFailed", seconds: number): void =>
  metrics.closeDuration.unsafeUpdate(seconds, tags(server, `c|${outcome}`, [[label.outcome, outcome]]))

/** A cleanup was confirmed, or found processes left. @internal */
export const cleanedUp = (server: string, outcome: "confirmed" | "processes_left"): void =>
  metrics.cleanups.unsafeUpdate(1, tags(server, `k|${outcome}`, [[label.outcome, outcome]]))

/** A notification was dropped for a subscriber that was full. @internal */
export const notificationDropped = (server: string): void =>
  metrics.notificationsDropped.unsafeUpdate(1, tags(server, "n", []))

/** The number of workers in each state, set whenever one changes. @internal */
export const workersIn = (server: string, state: string, count: number): void =>
  metrics.workers.unsafeUpdate(count, tags(server, `w|${state}`, [[label.state, state]]))

/**
 * A sample of the server trees of one server name: resident memory (bytes) and CPU time (seconds), summed over its
 * open workers, so that the labels stay as few as the names.
 *
 * @internal
 */
export const treesSampled = (server: string, rssBytes: number, cpuSeconds: number): void => {
  metrics.memory.unsafeUpdate(rssBytes, tags(server, "m", []))
  metrics.cpu.unsafeUpdate(cpuSeconds, tags(server, "u", []))
}

/** Every server name recorded so far, for a count that must fall back to zero. @internal */
export const knownServers = (): Iterable<string> => labelsByServer.keys()
