/**
 * The status of one worker: small, plain and safe to print. It never holds the config, arguments or results.
 *
 * @since 0.1.0
 */
import type { CleanupSummary, FailureKind } from "./McpWorkerError.js"

/**
 * A state of a worker: `opening → ready`, `ready → failed`, any → `closed`.
 *
 * @since 0.1.0
 * @category models
 */
export type WorkerState = "opening" | "ready" | "failed" | "closed"

/**
 * The status of one worker.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerStatus {
  readonly workerId: string
  readonly state: WorkerState
  readonly busy: boolean
  readonly requestId: string | null
  readonly pid: number | null
  readonly threadId: number | null
  /** The owner process's pid under `isolation: "process"`; `null` when the owner is a thread of the host. */
  readonly ownerPid: number | null
  readonly protocolVersion: string | null
  readonly server: { readonly name: string; readonly version: string } | null
  readonly lastFailure: { readonly kind: FailureKind; readonly message: string; readonly at: string } | null
  readonly cleanup: CleanupSummary | null
  readonly notifications: {
    readonly received: number
    readonly dropped: number
    readonly listChanged: {
      readonly tools: string | null
      readonly resources: string | null
      readonly prompts: string | null
    }
  }
}
