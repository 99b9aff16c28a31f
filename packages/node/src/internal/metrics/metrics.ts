// C24, C80: recorded in the host, where a request's end is known; label values are fixed lists or cut short.
import { InvalidInput, type McpWorkerError, type RequestError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Cause from "effect/Cause"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"

/** @internal */
export type Surface = "host" | "thread" | "socket" | "gateway"

/** @internal */
export type Outcome = "result" | "is_error" | McpWorkerError["_tag"]

// OpenTelemetry's advice for MCP durations, in seconds.
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

/** MCP semantic-convention names where one exists. @internal */
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

// C120: Prometheus would keep a unit label on every series, so it goes in the name.
const unitWords = { s: "seconds", By: "bytes" } as const

const exportedName = (spec: { readonly name: string; readonly unit: "s" | "By" | undefined }): string =>
  spec.unit === undefined ? spec.name : `${spec.name}_${unitWords[spec.unit]}`

/** @internal */
export const nameOf = Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, exportedName(spec)])) as {
  readonly [K in keyof typeof specs]: string
}

/** @internal */
export const names: ReadonlyArray<string> = Object.values(nameOf)

/** @internal */
export const labelsOf: { readonly [name: string]: ReadonlyArray<string> } = Object.fromEntries(
  Object.entries(specs).map(([key, spec]) => [nameOf[key as keyof typeof specs], spec.labels])
)

/** @internal */
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

/** Effect caches a metric's hook by the label array itself. */
interface Labels {
  readonly byKey: Map<string, ReadonlyArray<MetricLabel.MetricLabel>>
  readonly server: string
}

const labelsByServer = new Map<string, Labels>()

/** @internal */
export const maxNameLength = 64

/** @internal */
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

/** C25: the name a server reported is data. */
export const serverLabel = (name: string | undefined): string =>
  name === undefined || name.length === 0 ? "unknown" : name.slice(0, maxNameLength)

/** @internal */
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

/** Positional, no object made: runs on every request. @internal */
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

/** @internal */
export const requestSent = (server: string, surface: Surface): void =>
  metrics.inFlight.unsafeUpdate(1, tags(server, `f|${surface}`, [[label.surface, surface]]))

/** @internal */
export const opened = (server: string, outcome: string, seconds: number): void =>
  metrics.openDuration.unsafeUpdate(seconds, tags(server, `o|${outcome}`, [[label.outcome, outcome]]))

/** @internal */
export const closed = (server: string, outcome: "closed" | "CloseFailed", seconds: number): void =>
  metrics.closeDuration.unsafeUpdate(seconds, tags(server, `c|${outcome}`, [[label.outcome, outcome]]))

/** @internal */
export const cleanedUp = (server: string, outcome: "confirmed" | "processes_left"): void =>
  metrics.cleanups.unsafeUpdate(1, tags(server, `k|${outcome}`, [[label.outcome, outcome]]))

/** @internal */
export const notificationDropped = (server: string): void =>
  metrics.notificationsDropped.unsafeUpdate(1, tags(server, "n", []))

/** @internal */
export const workersIn = (server: string, state: string, count: number): void =>
  metrics.workers.unsafeUpdate(count, tags(server, `w|${state}`, [[label.state, state]]))

/** Summed per server, so labels stay as few as the names. @internal */
export const treesSampled = (server: string, rssBytes: number, cpuSeconds: number): void => {
  metrics.memory.unsafeUpdate(rssBytes, tags(server, "m", []))
  metrics.cpu.unsafeUpdate(cpuSeconds, tags(server, "u", []))
}

/** @internal */
export const knownServers = (): Iterable<string> => labelsByServer.keys()

// A request's count, once it ends. C80: the wrapped `resume` sees every way a request ends, so it counts each once.
// `ResultFile.encodeSpilled`'s wire form.
const spilledTag = "mcp-worker/spilled"

const isSpilledWire = (value: unknown): value is readonly [string, object] =>
  Array.isArray(value) && value.length === 2 && value[0] === spilledTag && typeof value[1] === "object"

/** @internal */
export interface Observed {
  readonly name?: string | undefined
  readonly server: { readonly name: string } | null
  /** C80 */
  readonly metrics?: boolean | undefined
  counts?: Counts | undefined
}

/** @internal */
export interface Counts {
  results: number
  isError: number
  notSent: number
  unknown: number
  /** Server error answers. */
  errors: number
}

const count = (worker: Observed | undefined, key: keyof Counts): void => {
  if (worker === undefined) return
  const counts = (worker.counts ??= { results: 0, isError: 0, notSent: 0, unknown: 0, errors: 0 })
  counts[key]++
}

/** @internal */
export class Observation {
  sentAt: number | undefined = undefined
  constructor(
    readonly worker: Observed | undefined,
    readonly method: OwnerProtocol.Method,
    readonly surface: Surface,
    readonly onEnd: (exit: Exit.Exit<unknown, RequestError>) => void
  ) {}

  sent(): void {
    this.sentAt = performance.now()
    requestSent(this.serverName(), this.surface)
  }

  readonly resume = (exit: Exit.Exit<unknown, RequestError>): void => {
    this.record(exit)
    this.onEnd(exit)
  }

  private serverName(): string {
    return this.worker === undefined ? serverLabel(undefined) : serverOf(this.worker)
  }

  private record(exit: Exit.Exit<unknown, RequestError>): void {
    const seconds = this.sentAt === undefined ? undefined : (performance.now() - this.sentAt) / 1000
    const server = this.serverName()
    if (Exit.isSuccess(exit)) {
      const outcome = isError(exit.value) ? "is_error" : "result"
      const spilled = spilledOf(exit.value)
      count(this.worker, outcome === "is_error" ? "isError" : "results")
      return requestEnded(server, this.surface, this.method, outcome, "delivered", seconds, spilled)
    }
    const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
    const delivery = error === undefined ? "unknown" : error.delivery
    count(this.worker, deliveryKey(delivery))
    requestEnded(server, this.surface, this.method, error?._tag ?? "WorkerFailed", delivery, seconds, undefined)
  }
}

const ignoreEnd = () => {}

/** C117: counted once, with no duration. @internal */
export const refusedUnsent = (
  worker: Observed | undefined,
  method: OwnerProtocol.Method,
  surface: Surface,
  error: RequestError
): void => new Observation(worker, method, surface, ignoreEnd).resume(Exit.fail(error))

const isError = (value: unknown): boolean => {
  const read = isSpilledWire(value) ? value[1] : value
  return typeof read === "object" && read !== null && (read as { isError?: unknown }).isError === true
}

const spilledOf = (value: unknown): number | undefined => {
  if (!isSpilledWire(value)) return undefined
  const bytes = (value[1] as { readonly bytes?: unknown }).bytes
  return typeof bytes === "number" ? bytes : undefined
}

/** C80: what an owner thread answered remote threads itself. @internal */
export const observed = (
  worker: Observed,
  requests: ReadonlyArray<(typeof OwnerProtocol.ObservedMessage.Type)["requests"][number]>
): void => {
  if (worker.metrics !== true) return
  const server = serverOf(worker)
  for (const request of requests) {
    if (request.seconds !== undefined) requestSent(server, "thread")
    const { outcome, delivery } = request
    count(worker, outcome === "result" ? "results" : outcome === "is_error" ? "isError" : deliveryKey(delivery))
    requestEnded(server, "thread", request.method, outcome, delivery, request.seconds, request.spilled)
  }
}

// C116
const deliveryKey = (delivery: "delivered" | "not_sent" | "unknown"): keyof Counts =>
  delivery === "delivered" ? "errors" : delivery === "not_sent" ? "notSent" : "unknown"
