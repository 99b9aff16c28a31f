// Runs the scenarios of remote-entry.ts in fresh worker_threads, from its bundle (test/globalSetup.ts: vitest's
// TypeScript transform does not reach worker threads, and one bundled file boots fast).
import { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Worker } from "node:worker_threads"
import { inject } from "vitest"
import type { ThreadInput, ThreadMessage } from "./remote-entry.js"

/** Where remote-entry.ts is bundled for the run (test/globalSetup.ts). */
export const remoteEntry = (): (() => string) => () => inject("remoteEntry")

/** How a thread's scenario ended: its value, or its error decoded into the core error class. */
export type Outcome = { readonly ok: true; readonly value: any } | { readonly ok: false; readonly error: unknown }

/** A running remote thread. */
export interface RemoteThread {
  readonly thread: Worker
  /** Resolves with the value of the thread's next event of that name. */
  readonly event: (name: string) => Promise<unknown>
  /** Posts a signal the thread's scenario waits for. */
  readonly send: (name: string) => void
  /** Resolves once the thread has reported and then exited on its own (nothing may keep it alive). */
  readonly outcome: Promise<Outcome>
  /** Resolves when the thread's scenario has reported its outcome (the thread may still be running). */
  readonly reported: Promise<void>
  /** Resolves with the exit code when the thread has exited, however it ended. */
  readonly exited: Promise<number>
}

const decodeError = Schema.decodeUnknownSync(McpWorkerError)

/** Starts a thread running one scenario. `env` becomes the thread's own `process.env`. */
export const startThread = (
  entry: string,
  input: ThreadInput,
  options: { readonly env?: Record<string, string> } = {}
): RemoteThread => {
  const thread = new Worker(entry, {
    workerData: input,
    ...(options.env === undefined ? {} : { env: options.env }),
    name: `remote ${input.scenario}`
  })
  const waiters = new Map<string, Array<(value: unknown) => void>>()
  const seen = new Map<string, Array<unknown>>()
  let reported: Outcome | undefined
  let onReported = () => {}
  const reportedSignal = new Promise<void>((resolve) => (onReported = resolve))
  thread.on("message", (message: ThreadMessage) => {
    if (message._tag === "Event") {
      const waiting = waiters.get(message.name)?.shift()
      if (waiting !== undefined) waiting(message.value)
      else seen.set(message.name, [...(seen.get(message.name) ?? []), message.value])
    } else if (message._tag === "Done") {
      reported = { ok: true, value: message.value }
      onReported()
    } else {
      reported = { ok: false, error: message.tagged ? decodeError(message.error) : message.error }
      onReported()
    }
  })
  const exited = new Promise<number>((resolve) => thread.once("exit", resolve))
  const outcome = new Promise<Outcome>((resolve, reject) => {
    thread.once("error", reject)
    void exited.then((code) =>
      reported === undefined ? reject(new Error(`thread exited with ${code} before reporting`)) : resolve(reported)
    )
  })
  // An unobserved failure (the test only waited for an event) must not become an unhandled rejection.
  outcome.catch(() => {})
  return {
    thread,
    event: (name) => {
      const early = seen.get(name)
      if (early !== undefined && early.length > 0) return Promise.resolve(early.shift())
      return new Promise((resolve) => waiters.set(name, [...(waiters.get(name) ?? []), resolve]))
    },
    send: (name) => thread.postMessage(name),
    outcome,
    reported: reportedSignal,
    exited
  }
}

/** `startThread` in a scope: the thread is terminated when the scope closes, if it still runs. */
export const remoteThread = (
  entry: string,
  input: ThreadInput,
  options?: { readonly env?: Record<string, string> }
): Effect.Effect<RemoteThread, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => startThread(entry, input, options)),
    (running) => Effect.promise(() => running.thread.terminate())
  )

// Once a scenario has reported, its thread has nothing left to do but exit; one still running this long after is
// kept alive by something of the library's (an idle channel, a timer), however slow the machine is.
const exitAfterReportMs = 10_000

/**
 * Runs a scenario to its end in a fresh thread; fails the test if the thread does not exit by itself once the
 * scenario has reported. The scenario's own time is bounded by the test's.
 */
export const runInThread = (
  entry: string,
  input: ThreadInput,
  options?: { readonly env?: Record<string, string> }
): Effect.Effect<Outcome> =>
  Effect.scoped(
    Effect.flatMap(remoteThread(entry, input, options), (running) =>
      Effect.promise(() => Promise.race([running.reported, running.exited])).pipe(
        Effect.zipRight(
          Effect.promise(() => running.outcome).pipe(
            Effect.timeoutFail({
              duration: exitAfterReportMs,
              onTimeout: () => new Error("the remote thread did not exit after its scenario reported")
            }),
            Effect.orDie
          )
        )
      )
    )
  )
