// Only a group the storage no longer lists is known gone.
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

export type Served = "served" | "gone" | "unknown"

export interface RunnerView {
  // "unknown": the storage could not be read.
  readonly served: (group: string) => Effect.Effect<Served>
  readonly addressOf: (group: string) => string | undefined
}

// A burst of calls to a dead group costs one read.
const missReadIntervalMs = 50

export const make = (
  refreshInterval: Duration.DurationInput
): Effect.Effect<RunnerView, never, RunnerStorage.RunnerStorage | Scope.Scope> =>
  Effect.gen(function* () {
    const storage = yield* RunnerStorage.RunnerStorage
    let groups = new Map<string, string>()
    let readAt = -Infinity
    let readable = false

    const read = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const runners = yield* storage.getRunners
      const next = new Map<string, string>()
      for (const [runner] of runners) {
        for (const group of runner.groups) next.set(group, `${runner.address.host}:${runner.address.port}`)
      }
      groups = next
      readAt = now
      readable = true
    }).pipe(
      Effect.catchAll(() =>
        Effect.sync(() => {
          readable = false
        })
      )
    )

    yield* read.pipe(Effect.repeat(Schedule.spaced(refreshInterval)), Effect.forkScoped, Effect.interruptible)

    const served = (group: string): Effect.Effect<Served> =>
      Effect.gen(function* () {
        if (groups.has(group)) return "served"
        const now = yield* Clock.currentTimeMillis
        if (now - readAt >= missReadIntervalMs || !readable) yield* read
        if (groups.has(group)) return "served"
        return readable ? "gone" : "unknown"
      })

    return { served, addressOf: (group) => groups.get(group) }
  })
