/**
 * The status of one worker: small, plain and safe to print. It never holds the config, arguments or results.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CleanupSummary, FailureKind } from "./McpWorkerError.js"

/**
 * The states of a worker: `opening → ready`, `ready → failed`, any → `closed`.
 *
 * @since 0.1.0
 * @category models
 */
export const WorkerState = Schema.Literal("opening", "ready", "failed", "closed")

/**
 * A state of a worker.
 *
 * @since 0.1.0
 * @category models
 */
export type WorkerState = typeof WorkerState.Type

/**
 * The schema of a worker status.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WorkerStatus = Schema.Struct({
  workerId: Schema.String,
  state: WorkerState,
  busy: Schema.Boolean,
  requestId: Schema.NullOr(Schema.String),
  pid: Schema.NullOr(Schema.Number),
  threadId: Schema.NullOr(Schema.Number),
  /** The owner process's pid under `isolation: "process"`; `null` when the owner is a thread of the host. */
  ownerPid: Schema.NullOr(Schema.Number),
  /** The protocol era negotiated (C51): `legacy` (`initialize`, 2025-11-25 and before) or `modern` (2026-07-28). */
  era: Schema.NullOr(Schema.Literal("legacy", "modern")),
  protocolVersion: Schema.NullOr(Schema.String),
  server: Schema.NullOr(Schema.Struct({ name: Schema.String, version: Schema.String })),
  lastFailure: Schema.NullOr(Schema.Struct({ kind: FailureKind, message: Schema.String, at: Schema.String })),
  cleanup: Schema.NullOr(CleanupSummary),
  notifications: Schema.Struct({
    /** Server notifications received (list changes, resource updates, log messages). */
    received: Schema.Number,
    /** Notifications that an `events` subscriber did not take in time: the oldest go first. */
    dropped: Schema.Number,
    /** When the server last said that a list changed (ISO 8601), per kind: a cached list older than this is stale. */
    listChanged: Schema.Struct({
      tools: Schema.NullOr(Schema.String),
      resources: Schema.NullOr(Schema.String),
      prompts: Schema.NullOr(Schema.String)
    })
  }),
  /** The runner that owns the worker, on a cluster (`@mcp-worker/cluster`): its address and its shard group. */
  runner: Schema.optional(Schema.Struct({ address: Schema.String, group: Schema.String }))
})

/**
 * The status of one worker, safe to print.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerStatus extends Schema.Schema.Type<typeof WorkerStatus> {}

// The Effect 3 face's own, below: the Effect 4 face's module is this one above this line.

/**
 * Server names and versions are untrusted display strings: cut to 128 characters.
 *
 * @since 0.1.0
 * @category constructors
 */
export const displayString = (value: unknown): string => (typeof value === "string" ? value.slice(0, 128) : "")
