// C80: the wrapped `resume` sees every way a request ends, so it counts each once.
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Metrics from "./metrics.js"

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
    readonly surface: Metrics.Surface,
    readonly onEnd: (exit: Exit.Exit<unknown, RequestError>) => void
  ) {}

  sent(): void {
    this.sentAt = performance.now()
    Metrics.requestSent(this.serverName(), this.surface)
  }

  readonly resume = (exit: Exit.Exit<unknown, RequestError>): void => {
    this.record(exit)
    this.onEnd(exit)
  }

  private serverName(): string {
    return this.worker === undefined ? Metrics.serverLabel(undefined) : Metrics.serverOf(this.worker)
  }

  private record(exit: Exit.Exit<unknown, RequestError>): void {
    const seconds = this.sentAt === undefined ? undefined : (performance.now() - this.sentAt) / 1000
    const server = this.serverName()
    if (Exit.isSuccess(exit)) {
      const outcome = isError(exit.value) ? "is_error" : "result"
      const spilled = spilledOf(exit.value)
      count(this.worker, outcome === "is_error" ? "isError" : "results")
      return Metrics.requestEnded(server, this.surface, this.method, outcome, "delivered", seconds, spilled)
    }
    const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
    const delivery = error === undefined ? "unknown" : error.delivery
    count(this.worker, deliveryKey(delivery))
    Metrics.requestEnded(server, this.surface, this.method, error?._tag ?? "WorkerFailed", delivery, seconds, undefined)
  }
}

const ignoreEnd = () => {}

/** C117: counted once, with no duration. @internal */
export const refusedUnsent = (
  worker: Observed | undefined,
  method: OwnerProtocol.Method,
  surface: Metrics.Surface,
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
  const server = Metrics.serverOf(worker)
  for (const request of requests) {
    if (request.seconds !== undefined) Metrics.requestSent(server, "thread")
    const { outcome, delivery } = request
    count(worker, outcome === "result" ? "results" : outcome === "is_error" ? "isError" : deliveryKey(delivery))
    Metrics.requestEnded(server, "thread", request.method, outcome, delivery, request.seconds, request.spilled)
  }
}

// C116
const deliveryKey = (delivery: "delivered" | "not_sent" | "unknown"): keyof Counts =>
  delivery === "delivered" ? "errors" : delivery === "not_sent" ? "notSent" : "unknown"
