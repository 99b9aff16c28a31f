// The tool filter (C59) as one suite every surface runs: a worker opened with `tools: { allow, deny }` lists only the
// tools the filter allows, refuses every other call with InvalidInput before it is sent, and keeps doing both after the
// server's tool list changed. The fixture's `calls` tool says which tools/call requests reached the server, so a
// refusal that let a request through fails the suite. Returns plain data, to compare surfaces' answers.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** What the suite needs of a surface: Promise functions (an Effect surface is adapted with `effectFilterSurface`). */
export interface FilterSurface {
  readonly listTools: (id: string) => Promise<{ readonly tools: ReadonlyArray<{ readonly name: string }> }>
  readonly callTool: (
    id: string,
    name: string,
    args?: any,
    options?: { readonly onProgress?: (progress: unknown) => void }
  ) => Promise<any>
  readonly status: (id: string) => Promise<{ readonly notifications: { readonly listChanged: { tools: unknown } } }>
}

/** The filter every surface opens its worker with: globs in both lists, a deny that wins over an allow. */
export const filter = {
  allow: ["ec?o", "inc", "calls", "add_*", "browser_*"],
  deny: ["browser_install", "*_secret"]
} as const

/** The tools `add_tools` registers while the server runs: one the filter allows, three it does not. */
const added = ["browser_open", "browser_install", "browser_secret", "hidden"]

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    (): { _tag: string; delivery?: string; where?: string; path?: string } => ({ _tag: "resolved" }),
    (error: { _tag?: string; delivery?: string; path?: string; where?: string }) => ({
      _tag: error._tag ?? "unknown",
      delivery: error.delivery,
      where: error.where,
      path: error.path
    })
  )

const names = (result: { readonly tools: ReadonlyArray<{ readonly name: string }> }) =>
  result.tools.map((tool) => tool.name).sort()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs the suite on a fresh worker opened with `filter`. `listChanged`: the server is the legacy stateful fixture,
 * whose `add_tools` changes its tool list (and announces it).
 */
export const exerciseFilter = async (mcp: FilterSurface, id: string, options: { readonly listChanged: boolean }) => {
  const before = names(await mcp.listTools(id))
  // On a remote thread the first request is relayed by the host; those after it go straight to the owner thread.
  const refusedFirst = await refusal(mcp.callTool(id, "sleep", { ms: 1 }))
  const allowed = (await mcp.callTool(id, "echo", { token: "allowed" })).structuredContent.token
  const refusedAfter = [
    await refusal(mcp.callTool(id, "fail")),
    await refusal(mcp.callTool(id, "no_such_tool")),
    await refusal(mcp.callTool(id, "echo_args", { token: "x" }))
  ]
  let changed: Record<string, unknown> = {}
  if (options.listChanged) {
    await mcp.callTool(id, "add_tools", { names: added })
    let announced = false
    for (let i = 0; i < 150 && !announced; i++) {
      announced = (await mcp.status(id)).notifications.listChanged.tools !== null
      if (!announced) await sleep(20)
    }
    changed = {
      announced,
      after: names(await mcp.listTools(id)),
      addedAllowed: (await mcp.callTool(id, "browser_open")).structuredContent.tool,
      addedRefused: [
        await refusal(mcp.callTool(id, "browser_install")),
        await refusal(mcp.callTool(id, "browser_secret")),
        await refusal(mcp.callTool(id, "hidden"))
      ]
    }
  }
  const calls = (await mcp.callTool(id, "calls")).structuredContent.calls as ReadonlyArray<{ readonly name: string }>
  return { before, refusedFirst, allowed, refusedAfter, ...changed, reachedServer: calls.map((call) => call.name) }
}

const refused = { _tag: "InvalidInput", delivery: "not_sent", where: "arguments", path: "name" }

/** What every surface must answer, for the legacy stateful fixture (`listChanged`) or the modern one. */
export const expectedFilter = (options: { readonly listChanged: boolean }) =>
  options.listChanged
    ? {
        before: ["add_tools", "calls", "echo", "inc"],
        refusedFirst: refused,
        allowed: "allowed",
        refusedAfter: [refused, refused, refused],
        announced: true,
        after: ["add_tools", "browser_open", "calls", "echo", "inc"],
        addedAllowed: "browser_open",
        addedRefused: [refused, refused, refused],
        // Only what the filter allows ever reached the server.
        reachedServer: ["echo", "add_tools", "browser_open", "calls"]
      }
    : {
        before: ["calls", "echo", "inc"],
        refusedFirst: refused,
        allowed: "allowed",
        refusedAfter: [refused, refused, refused],
        reachedServer: ["echo", "calls"]
      }

/** Runs an effect as a Promise that rejects with its failure itself (not a FiberFailure around it). */
export const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    return Promise.reject(failure._tag === "Some" ? failure.value : Cause.squash(exit.cause))
  })

/** An Effect surface (`McpWorkers`, a connected or remote service) as a `FilterSurface`; failures reject as is. */
export const effectFilterSurface = (workers: {
  readonly listTools: (id: string) => Effect.Effect<any, unknown>
  readonly callTool: (id: string, name: string, args?: any, options?: any) => Effect.Effect<any, unknown>
  readonly status: (id: string) => Effect.Effect<any, unknown>
}): FilterSurface => {
  return {
    listTools: (id) => run(workers.listTools(id)),
    callTool: (id, name, args, options) => run(workers.callTool(id, name, args, options)),
    status: (id) => run(workers.status(id))
  }
}

/**
 * The surface with a progress callback on every call: a remote thread's calls then all go through the host (progress
 * travels there), never straight to the owner thread.
 */
export const relayedFilter = (surface: FilterSurface): FilterSurface => ({
  ...surface,
  callTool: (id, name, args) => surface.callTool(id, name, args, { onProgress: () => {} })
})

/** A bad filter's refusal as data: the open is refused before anything starts. */
export const openRefusal = (promise: Promise<unknown>) => refusal(promise)

/** Filters `open` refuses, each with the path its `InvalidInput` names. */
export const badFilters: ReadonlyArray<readonly [unknown, string]> = [
  [{ allow: ["echo", "inc", 7] }, "options.tools.allow[2]"],
  [{ deny: ["ok", ""] }, "options.tools.deny[1]"],
  [{ allow: ["browser_[ab]"] }, "options.tools.allow[0]"],
  [{ allow: "echo" }, "options.tools.allow"],
  [{ only: ["echo"] }, "options.tools.only"],
  [["echo"], "options.tools"]
]
