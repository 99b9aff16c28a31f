/**
 * How the host records a request: its caller's `resume`, wrapped once, sees every way the request can end (the
 * owner's answer, a refusal before anything was sent, a timeout, a cancel, a close), so it is the one place that
 * counts it (C80).
 *
 * @internal
 */
import type { RequestError } from "@mcp-worker/core/McpWorkerError"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Metrics from "./metrics.js"

// The wire form of a spilled answer (`ResultFile.encodeSpilled`): the owner's answer, before a surface reads it.
const spilledTag = "mcp-worker/spilled"

const isSpilledWire = (value: unknown): value is readonly [string, object] =>
  Array.isArray(value) && value.length === 2 && value[0] === spilledTag && typeof value[1] === "object"

/** What an owner thread said of a success it posted to a remote caller itself (`Delivered`). @internal */
export interface DeliveredNote {
  readonly isError?: boolean | undefined
  readonly spilled?: number | undefined
}

/** What a request is recorded against: its worker's server name and what it said of a delivered success. @internal */
export interface Observed {
  /** The name the worker's open gave it. */
  readonly name?: string | undefined
  readonly server: { readonly name: string } | null
  delivered?: DeliveredNote | undefined
  /** The worker's own counts, for the host's view. */
  counts?: Counts | undefined
}

/** A worker's requests, counted by how they ended. @internal */
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

/** The sentinel a delivered success ends with (`entry.ts` `delivered`). @internal */
export type DeliveredValue = symbol

/**
 * One request's record: `sent` when its message went to the owner, `resume` its caller's, counted as it ends.
 *
 * @internal
 */
export class Observation {
  sentAt: number | undefined = undefined
  constructor(
    readonly worker: Observed | undefined,
    readonly method: OwnerProtocol.Method,
    readonly surface: Metrics.Surface,
    readonly delivered: DeliveredValue,
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
      // `isError` first: reading a delivered success's spill forgets what the owner said of it.
      const outcome = this.isError(exit.value) ? "is_error" : "result"
      const spilled = this.spilledOf(exit.value)
      count(this.worker, outcome === "is_error" ? "isError" : "results")
      return Metrics.requestEnded(server, this.surface, this.method, outcome, "none", seconds, spilled)
    }
    const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
    // A server's error answer has no delivery: it is an answer.
    const delivery = error === undefined ? "unknown" : "delivery" in error ? error.delivery : "none"
    count(this.worker, delivery === "none" ? "errors" : delivery === "not_sent" ? "notSent" : "unknown")
    Metrics.requestEnded(server, this.surface, this.method, error?._tag ?? "WorkerFailed", delivery, seconds, undefined)
  }

  // A success the owner delivered to a remote caller itself is read off what it said of it (`Delivered`).
  private isError(value: unknown): boolean {
    if (value === this.delivered) return this.worker?.delivered?.isError === true
    const read = isSpilledWire(value) ? value[1] : value
    return typeof read === "object" && read !== null && (read as { isError?: unknown }).isError === true
  }

  private spilledOf(value: unknown): number | undefined {
    if (value === this.delivered) {
      const spilled = this.worker?.delivered?.spilled
      if (this.worker !== undefined) this.worker.delivered = undefined
      return spilled
    }
    if (!isSpilledWire(value)) return undefined
    const bytes = (value[1] as { readonly bytes?: unknown }).bytes
    return typeof bytes === "number" ? bytes : undefined
  }
}
