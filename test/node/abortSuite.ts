// A caller whose call has answered finds the worker free on its next call (C11, C46): the next call is never
// `WorkerBusy`. Run against every surface, each round aborts a call the server is working on (its first progress
// notification proves it), then calls again at once.

/** What `abortThenCall` needs of a surface: the Promise client's `callTool`. */
export interface AbortSurface {
  readonly callTool: (
    id: string,
    name: string,
    args?: { readonly [key: string]: string | number },
    options?: { readonly signal?: AbortSignal; readonly onProgress?: (progress: unknown) => void }
  ) => Promise<any>
}

/** How the rounds' aborted calls and next calls ended, counted by outcome. */
export interface AbortRounds {
  readonly aborted: Record<string, number>
  readonly next: Record<string, number>
}

const tagOf = (outcome: PromiseSettledResult<unknown>): string => {
  if (outcome.status === "fulfilled") return "result"
  const error = outcome.reason as { _tag?: unknown; delivery?: unknown }
  return typeof error?._tag === "string" ? `${error._tag}:${String(error.delivery)}` : `other:${String(error)}`
}

const count = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1)

/**
 * When a round aborts its call: at the call's first progress notification (the server is working on it), or after
 * some milliseconds (for a surface that carries no progress: a call across runners).
 */
export type AbortAt = { readonly at: "progress" } | { readonly at: "delay"; readonly ms: (round: number) => number }

/** `rounds` times: a call aborted while it runs, then an `echo` at once. */
export const abortThenCall = async (
  mcp: AbortSurface,
  id: string,
  rounds: number,
  abortAt: AbortAt = { at: "progress" }
): Promise<AbortRounds> => {
  const aborted: Record<string, number> = {}
  const next: Record<string, number> = {}
  for (let round = 0; round < rounds; round++) {
    const controller = new AbortController()
    const calling =
      abortAt.at === "progress"
        ? mcp.callTool(
            id,
            "progress",
            { steps: 1_000, delayMs: 50 },
            { signal: controller.signal, onProgress: () => controller.abort() }
          )
        : mcp.callTool(id, "sleep", { ms: 10_000 }, { signal: controller.signal })
    if (abortAt.at === "delay") setTimeout(() => controller.abort(), abortAt.ms(round))
    count(aborted, tagOf((await Promise.allSettled([calling]))[0]!))
    count(next, tagOf((await Promise.allSettled([mcp.callTool(id, "echo", { token: `round ${round}` })]))[0]!))
  }
  return { aborted, next }
}

/** Every round: the aborted call said `unknown` (it was sent), and the next call had its result. */
export const expectedRounds = (rounds: number, aborted: string): AbortRounds => ({
  aborted: { [aborted]: rounds },
  next: { result: rounds }
})
