import type { CleanupSummary } from "@mcp-worker/core/McpWorkerError"
import type { ChildProcess as NodeChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CleanupScanService, JobRef, ProcessJob, SpawnOptions, Started, StopOptions } from "../../ProcessJob.js"
import * as Ps from "./ps.js"
import * as ProcessStart from "./start.js"
import * as internal from "./scan.js"
import * as ProcessStop from "./stop.js"

/** @internal */
export class CleanupScan extends Context.Reference<CleanupScan>()("@mcp-worker/node/ProcessJob/CleanupScan", {
  defaultValue: (): CleanupScanService => ({ scan })
}) {}

/** @internal */
export const layerCleanupScanTest = (service: Partial<CleanupScanService>): Layer.Layer<CleanupScan> =>
  Layer.succeed(CleanupScan, { scan: service.scan ?? CleanupScan.defaultValue().scan })

/** @internal */
export class SpawnError extends Data.TaggedError("SpawnError")<{
  readonly message: string
  readonly code: string | null
}> {}

/** @internal */
export const spawn = (options: SpawnOptions): Effect.Effect<ProcessJob, SpawnError> =>
  Effect.suspend(() =>
    options.marker.length === 0
      ? Effect.fail(new SpawnError({ message: "the job marker must not be empty", code: null }))
      : adopt(ProcessStart.start(options), options.marker)
  )

/** @internal */
export const adopt = (started: Started, marker: string): Effect.Effect<ProcessJob, SpawnError> =>
  Effect.gen(function* () {
    const { scan: count } = yield* CleanupScan
    const error = yield* Effect.promise(() => started.started)
    if (error !== undefined || started.child === undefined) return yield* spawnError(error, started)
    // C98: the face's `ChildProcess` names no Node type; the one `start` spawned is Node's.
    const child = started.child as NodeChildProcess
    const pid = child.pid!
    const exited = Effect.promise(() => started.exited)
    return {
      child,
      pid,
      pgid: pid,
      marker,
      exited,
      stop: (stopOptions?: StopOptions) =>
        ProcessStop.stopSequence({ pgid: pid, marker, child, exited, count, budgetMs: stopOptions?.budgetMs }).pipe(
          Effect.withSpan("ProcessJob.stop", { attributes: { pid } })
        )
    } satisfies ProcessJob
  }).pipe(Effect.uninterruptible)

/** @internal */
export const scan = (marker: string, pgid?: number): Effect.Effect<ReadonlyArray<number>> =>
  Effect.map(internal.scanJob(marker, pgid), (found) => found.map((p) => p.pid))

/** @internal */
export const stopDetached = (ref: JobRef, options?: StopOptions): Effect.Effect<CleanupSummary> =>
  Effect.flatMap(CleanupScan, ({ scan: count }) =>
    ProcessStop.stopSequence({
      pgid: ref.pgid,
      marker: ref.marker,
      child: undefined,
      exited: Effect.void,
      count,
      budgetMs: options?.budgetMs
    })
  ).pipe(Effect.withSpan("ProcessJob.stopDetached", { attributes: { pgid: ref.pgid ?? null } }))

/** @internal */
export const killGroupSync = (pgid: number, marker?: string): number => {
  if (!internal.isSignallable(pgid)) return 0
  if (internal.platform === "win32") return internal.taskkillSync(pgid)
  const linux = internal.platform === "linux"
  const found = linux ? internal.scanProc(marker ?? "", pgid) : Ps.scanPsSync(marker ?? "", pgid)
  let sent = 0
  const groupMembers = found.some((p) => p.inGroup)
  const ours =
    !linux || marker === undefined || found.some((p) => p.inGroup && p.marked) || !found.some((p) => p.pid === pgid)
  const groupSignalled = groupMembers && ours && internal.signalGroup(pgid, "SIGKILL")
  if (groupSignalled) sent++
  // C100
  if (marker !== undefined || !linux) {
    for (const p of found) {
      if (p.marked && !(p.inGroup && groupSignalled) && internal.signalMarked(p.pid, marker ?? "", "SIGKILL")) sent++
    }
  }
  return sent
}

// internal

// C4, C24: never its arguments.
const spawnError = (error: unknown, started: Started): SpawnError => {
  const code =
    typeof (error as NodeJS.ErrnoException)?.code === "string" ? (error as NodeJS.ErrnoException).code! : null
  const cwd = started.cwd ?? process.cwd()
  const reason =
    code === "ENOENT"
      ? directoryExists(cwd)
        ? "the command was not found"
        : "the working directory was not found"
      : code === "EACCES"
        ? "permission denied"
        : "the process could not be started"
  const what =
    started.command === undefined
      ? ""
      : ` (command ${JSON.stringify(started.command)}, working directory ${JSON.stringify(cwd)})`
  return new SpawnError({ message: `spawn failed${code === null ? "" : ` (${code})`}: ${reason}${what}`, code })
}

const directoryExists = (path: string): boolean =>
  NodeFs.statSync(path, { throwIfNoEntry: false })?.isDirectory() === true
