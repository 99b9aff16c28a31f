// C93: every other handle is unref'd, so an undisposed host lets the program end.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

let inFlight = 0
let timer: ReturnType<typeof setInterval> | undefined

/** The release is idempotent. @internal */
export const acquire = (): (() => void) => {
  inFlight++
  // Only holds the loop.
  if (timer === undefined) timer = setInterval(() => {}, 2 ** 31 - 1)
  let released = false
  return () => {
    if (released) return
    released = true
    inFlight--
    if (inFlight === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
}

/** @internal */
export const holding = (): boolean => inFlight > 0

/** @internal */
export const sleep = (duration: Duration.DurationInput): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Math.min(Duration.toMillis(duration), 2 ** 31 - 1))
    timer.unref()
    return Effect.sync(() => clearTimeout(timer))
  })

/** @internal */
export const held = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(acquire),
    () => effect,
    (release) => Effect.sync(release)
  )

/** @internal */
export const heldStream = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(Effect.sync(acquire), (release) => Effect.sync(release)),
      () => stream
    )
  )

/** @internal */
export const heldService = <S extends object>(service: S): S =>
  Object.fromEntries(
    Object.entries(service).map(([name, value]) => [
      name,
      typeof value !== "function"
        ? value
        : (...args: Array<unknown>) => {
            const result = (value as (...all: Array<unknown>) => unknown)(...args)
            if (typeof result === "object" && result !== null && Stream.StreamTypeId in result) {
              return heldStream(result as Stream.Stream<unknown, unknown>)
            }
            return Effect.isEffect(result) ? held(result) : result
          }
    ])
  ) as S
