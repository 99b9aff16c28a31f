// The first pull starts at once, not forked, so it is sent before the caller's next call.
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"

/** @internal */
export interface Batch<A> {
  readonly items: ReadonlyArray<A>
  readonly done: boolean
}

/** `end: true` tells the host to forget it. @internal */
export const pulled = <A, E>(
  pull: (end: boolean) => Effect.Effect<Batch<A>, E>
): Effect.Effect<Effect.Effect<Chunk.Chunk<A>, Option.Option<E>>, never, Scope.Scope> =>
  Effect.gen(function* () {
    // Its failure is the first read's.
    const first = Runtime.runFork(yield* Effect.runtime<never>())(Effect.exit(pull(false)))
    yield* Effect.addFinalizer(() => Fiber.interrupt(first))
    let taken = false
    let done = false
    yield* Effect.addFinalizer(() => (done ? Effect.void : Effect.ignore(pull(true))))
    return Effect.suspend(() => {
      if (done) return Effect.fail(Option.none())
      const batch = taken ? pull(false) : Effect.flatten(Fiber.join(first))
      taken = true
      return Effect.mapBoth(batch, {
        onFailure: (error) => {
          done = true
          return Option.some(error)
        },
        onSuccess: (batch) => {
          done = batch.done
          return Chunk.unsafeFromArray(batch.items.slice())
        }
      })
    })
  })
