// C121: one suite for the idle budget, run against every surface that takes a request's options. It drives the
// fixture's `progress` tool (a notification, then a pause, `steps` times) and `sleep`, and reads what the server saw
// (`calls`, `cancelled`), returning plain data so each surface's answers can be compared.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** What the suite needs of a surface: `callTool` as a Promise, with a request's options passed as they are. */
export interface IdleSurface {
  // `any`: the suite passes bad options on purpose.
  readonly callTool: (id: string, name: string, args?: any, options?: any) => Promise<any>
}

/** A `callTool` of an Effect surface (the host service, a remote thread's, a socket peer's, `McpClient`'s). */
export const effectIdleSurface = (
  callTool: (id: string, name: string, args?: any, options?: any) => Effect.Effect<any, unknown>
): IdleSurface => ({
  callTool: (id, name, args, options) =>
    Effect.runPromiseExit(callTool(id, name, args, options)).then((exit) =>
      Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause))
    )
})

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: { _tag?: string; delivery?: string; reason?: string; path?: string }) =>
      [error._tag, error.path ?? error.reason, error.delivery].join(" ")
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the suite on a fresh worker of the stateful (or modern) fixture. */
export const exerciseIdle = async (mcp: IdleSurface, id: string) => {
  // Progress every 50 ms for 600 ms: each notification starts the 400 ms idle wait anew, so the call completes.
  let heard = 0
  const onProgress = () => void heard++
  const steady = { steps: 12, delayMs: 50 }
  const kept = await outcome(mcp.callTool(id, "progress", steady, { idleTimeout: 400, timeout: 30_000, onProgress }))
  const keptUnheard = await outcome(
    mcp.callTool(id, "progress", steady, { idleTimeout: "400 millis", timeout: 30_000 })
  )
  // One notification, then 20 s of silence: the idle budget ends the call, long before its whole budget.
  const started = Date.now()
  const silent = { steps: 2, delayMs: 20_000 }
  const stalled = await outcome(mcp.callTool(id, "progress", silent, { idleTimeout: 300, timeout: 30_000 }))
  const stalledMs = Date.now() - started
  // No progress at all, under the worker's default budget.
  const quiet = await outcome(mcp.callTool(id, "sleep", { ms: 20_000, token: "quiet" }, { idleTimeout: 300 }))
  // Refused at once, unsent: not positive, not finite, not a duration, longer than the timeout.
  const bad = await Promise.all(
    [0, -1, Infinity, "soon", 5_000].map((idleTimeout) =>
      outcome(mcp.callTool(id, "echo", { token: "bad" }, { idleTimeout, timeout: 1_000 }))
    )
  )
  // What the server saw: exactly the two calls the idle budget ended were cancelled, as timeouts (C10).
  let server = { calls: [] as Array<any>, cancelled: [] as Array<any> }
  for (let i = 0; i < 100; i++) {
    await sleep(i === 0 ? 0 : 20)
    const calls = (await mcp.callTool(id, "calls", {})).structuredContent.calls
    const cancelled = (await mcp.callTool(id, "cancelled", {})).structuredContent.cancelled
    server = { calls, cancelled }
    if (cancelled.length >= 2) break
  }
  const nameOf = (requestId: unknown) => {
    const call = server.calls.find((c) => c.id === requestId)
    return call === undefined ? "?" : (call.token ?? call.name)
  }
  return {
    kept,
    heardEveryStep: heard === steady.steps,
    keptUnheard,
    stalled,
    endedByIdle: stalledMs >= 250 && stalledMs < 10_000,
    quiet,
    bad,
    echoesAtServer: server.calls.filter((call) => call.name === "echo").length,
    cancelledAtServer: server.cancelled.map((c) => [nameOf(c.requestId), c.reason]),
    after: await outcome(mcp.callTool(id, "echo", { token: "after" }))
  }
}

/** What every surface answers. */
export const expectedIdle = {
  kept: "ok",
  heardEveryStep: true,
  keptUnheard: "ok",
  stalled: "DeliveryUnknown timeout unknown",
  endedByIdle: true,
  quiet: "DeliveryUnknown timeout unknown",
  bad: Array(5).fill("InvalidInput options.idleTimeout not_sent"),
  echoesAtServer: 0,
  cancelledAtServer: [
    ["progress", "timeout"],
    ["quiet", "timeout"]
  ],
  after: "ok"
}
