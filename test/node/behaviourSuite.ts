// One behaviour suite for the rules every request follows — one at a time (busy is not sent), the budget is the
// whole wait, `cancel` and a caller who stops waiting cancel exactly that request at the server, and the worker
// goes on — run against every surface (the host service, the Promise client in the host's thread and in a remote
// thread). It drives the stateful fixture, whose `calls` and `cancelled` tools say what the server saw, and returns
// plain data so each surface's answers can be compared.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"

/** What the suite needs of a surface: Promise functions (the host service is adapted to them). */
export interface BehaviourSurface {
  readonly callTool: (
    id: string,
    name: string,
    args?: any,
    options?: { timeout?: number; signal?: AbortSignal; onProgress?: (progress: unknown) => void }
  ) => Promise<any>
  readonly cancel: (id: string, requestId: string) => Promise<void>
  readonly status: (id: string) => Promise<{ busy: boolean; requestId: string | null; state: string }>
  /** `false` for a surface that has no worker id (`McpClient`): only a request id is checked there. */
  readonly takesWorkerIds?: false
}

// An id that is not a string (the `undefined` of an openAll entry that failed): refused at once, unsent, by path (C94).
const refusedId = (promise: Promise<unknown>) =>
  promise.then(
    () => "answered",
    (error: { _tag?: string; path?: string; delivery?: string }) => `${error._tag} ${error.path} ${error.delivery}`
  )

const badIds = async (mcp: BehaviourSurface, id: string) => {
  const bad = [undefined, 5, null] as Array<any>
  const requestIds = await Promise.all(bad.map((requestId) => refusedId(mcp.cancel(id, requestId))))
  if (mcp.takesWorkerIds === false) return { requestIds }
  const workerIds = await Promise.all(
    bad.flatMap((workerId) => [
      refusedId(mcp.callTool(workerId, "echo", { token: "bad id" })),
      refusedId(mcp.status(workerId)),
      refusedId(mcp.cancel(workerId, "1"))
    ])
  )
  return { requestIds, workerIds }
}

/** A failure as data: its tag, and what it says about delivery. */
interface Seen {
  readonly _tag: string
  readonly delivery?: string
  readonly reason?: string
  readonly requestId?: string
}

const outcome = (promise: Promise<unknown>): Promise<Seen> =>
  promise.then(
    () => ({ _tag: "ok" }),
    (error: { _tag?: string; name?: string; delivery?: string; reason?: string; requestId?: string }) => ({
      _tag: error._tag ?? error.name ?? "unknown",
      ...(error.delivery === undefined ? {} : { delivery: error.delivery }),
      ...(error.reason === undefined ? {} : { reason: error.reason }),
      ...(error.requestId === undefined ? {} : { requestId: error.requestId })
    })
  )

// The request an error names, compared with the one that was in flight, and the rest of the error as data.
const naming = (seen: Seen, inFlightId: string) => {
  const { requestId, ...rest } = seen
  return { ...rest, namesTheRequestInFlight: requestId === inFlightId }
}

const withoutRequestId = ({ requestId: _, ...rest }: Seen) => rest

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The id of the request in flight, once there is one. */
export const inFlight = async (mcp: BehaviourSurface, id: string): Promise<string> => {
  for (let i = 0; i < 400; i++) {
    const status = await mcp.status(id)
    if (status.busy && status.requestId !== null) return status.requestId
    await sleep(5)
  }
  throw new Error("no request went into flight")
}

/** Runs the suite on a fresh worker of the stateful fixture. */
export const exerciseBehaviour = async (mcp: BehaviourSurface, id: string) => {
  // One at a time: a second call while one is in flight is refused, and never reaches the server.
  const first = mcp.callTool(id, "sleep", { ms: 400, token: "first" })
  let firstEnded = false
  void first.finally(() => (firstEnded = true)).catch(() => {})
  const firstId = await inFlight(mcp, id)
  const busy = naming(await outcome(mcp.callTool(id, "echo", { token: "busy" })), firstId)
  // Refused at once: the answer does not wait for the call in flight, so it comes before that call's end.
  const refusedAtOnce = !firstEnded
  const firstAnswer = (await first).structuredContent.token

  // The budget is the whole wait: the caller hears at the deadline, and the server is told to stop.
  const started = Date.now()
  const timedOut = await outcome(mcp.callTool(id, "sleep", { ms: 10_000, token: "timeout" }, { timeout: 300 }))
  const waited = Date.now() - started

  // `cancel` names one request; a second cancel finds nothing pending.
  const cancelling = outcome(mcp.callTool(id, "sleep", { ms: 10_000, token: "cancel" }))
  const requestId = await inFlight(mcp, id)
  await mcp.cancel(id, requestId)
  const cancelled = naming(await cancelling, requestId)
  const notPending = naming(await outcome(mcp.cancel(id, requestId)), requestId)

  // A caller who stops waiting (an AbortSignal, an interrupted fiber) cancels its request too.
  const controller = new AbortController()
  const aborting = outcome(mcp.callTool(id, "sleep", { ms: 10_000, token: "abort" }, { signal: controller.signal }))
  await inFlight(mcp, id)
  controller.abort()
  const aborted = await aborting

  // What the server saw: each call once, and exactly one cancellation for each request given up.
  let server = { calls: [] as Array<any>, cancelled: [] as Array<any> }
  for (let i = 0; i < 100; i++) {
    await sleep(i === 0 ? 0 : 20)
    const calls = (await mcp.callTool(id, "calls")).structuredContent.calls
    const cancelledAtServer = (await mcp.callTool(id, "cancelled")).structuredContent.cancelled
    server = { calls, cancelled: cancelledAtServer }
    if (cancelledAtServer.length >= 3) break
  }
  const tokenOf = (requestId: unknown) => server.calls.find((call) => call.id === requestId)?.token ?? "?"
  return {
    busy,
    refusedAtOnce,
    firstAnswer,
    timedOut: withoutRequestId(timedOut),
    waitedAboutTheBudget: waited >= 290 && waited < 2_000,
    cancelled,
    notPending,
    aborted: withoutRequestId(aborted),
    sleepsAtServer: server.calls.filter((call) => call.name === "sleep").map((call) => call.token),
    cancelledAtServer: server.cancelled.map((c) => [tokenOf(c.requestId), c.reason]),
    badIds: await badIds(mcp, id),
    after: (await mcp.callTool(id, "echo", { token: "after" })).structuredContent.token,
    status: (await mcp.status(id)).state
  }
}

/** What every surface must answer; `aborted` is what a caller who stops waiting gets on that surface. */
export const expectedBehaviour = (
  aborted: { _tag: string; delivery?: string; reason?: string },
  surface: { readonly takesWorkerIds?: false } = {}
) => ({
  busy: { _tag: "WorkerBusy", delivery: "not_sent", namesTheRequestInFlight: true },
  refusedAtOnce: true,
  firstAnswer: "first",
  timedOut: { _tag: "DeliveryUnknown", delivery: "unknown", reason: "timeout" },
  waitedAboutTheBudget: true,
  cancelled: { _tag: "DeliveryUnknown", delivery: "unknown", reason: "cancelled", namesTheRequestInFlight: true },
  notPending: { _tag: "RequestNotPending", delivery: "not_sent", namesTheRequestInFlight: true },
  aborted,
  sleepsAtServer: ["first", "timeout", "cancel", "abort"],
  cancelledAtServer: [
    ["timeout", "timeout"],
    ["cancel", "cancelled"],
    ["abort", "interrupted"]
  ],
  badIds: {
    requestIds: Array(3).fill("InvalidInput requestId not_sent"),
    ...(surface.takesWorkerIds === false ? {} : { workerIds: Array(9).fill("InvalidInput workerId not_sent") })
  },
  after: "after",
  status: "ready"
})

/**
 * The surface with a progress callback on every call: a remote thread's calls then all go through the host (progress
 * travels there, C29), never straight to the owner thread, so the suite runs on the relayed path.
 */
export const withProgress = (surface: BehaviourSurface): BehaviourSurface => ({
  ...surface,
  callTool: (id, name, args, options) => surface.callTool(id, name, args, { ...options, onProgress: () => {} })
})

/** A Promise client's caller who aborts gets `DeliveryUnknown{interrupted}`. */
export const abortedByPromise = { _tag: "DeliveryUnknown", delivery: "unknown", reason: "interrupted" }

/** An interrupted Effect caller is interrupted (it waits for nothing). */
export const abortedByInterruption = { _tag: "Interrupted" }

/**
 * The `McpWorkers` service as a `BehaviourSurface`: each call is its own fiber of `runtime`, which the signal
 * interrupts (the caller then sees `Interrupted`); failures reject with the error itself.
 */
export const effectSurface = (
  workers: {
    readonly callTool: (id: string, name: string, args?: any, options?: any) => Effect.Effect<any, unknown>
    readonly cancel: (id: string, requestId: string) => Effect.Effect<void, unknown>
    readonly status: (id: string) => Effect.Effect<any, unknown>
  },
  runtime: Runtime.Runtime<never> = Runtime.defaultRuntime
): BehaviourSurface => {
  // Each call caught as the caller's own Exit: a caller that handles its failure (Effect.exit), as an app would.
  const run = <A>(effect: Effect.Effect<A, unknown>, signal?: AbortSignal): Promise<A> =>
    Runtime.runPromiseExit(runtime)(Effect.exit(effect), signal === undefined ? undefined : { signal }).then(
      (outer) => {
        const exit = Exit.flatten(outer)
        if (Exit.isSuccess(exit)) return exit.value
        const failure = Cause.failureOption(exit.cause)
        if (failure._tag === "Some") return Promise.reject(failure.value)
        return Promise.reject(Cause.isInterruptedOnly(exit.cause) ? { _tag: "Interrupted" } : Cause.squash(exit.cause))
      }
    )
  return {
    callTool: (id, name, args, options) =>
      run(
        workers.callTool(id, name, args, {
          ...(options?.timeout === undefined ? {} : { timeout: options.timeout }),
          ...(options?.onProgress === undefined ? {} : { onProgress: options.onProgress })
        }),
        options?.signal
      ),
    cancel: (id, requestId) => run(workers.cancel(id, requestId)),
    status: (id) => run(workers.status(id))
  }
}
