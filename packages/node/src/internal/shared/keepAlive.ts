/**
 * What keeps this thread's event loop alive on the library's account (C93): one timer, ref'd while any operation is
 * in flight and gone when none is. Every other handle of the library (owner threads and processes, their ports and
 * pipes, its own timers) is unref'd, so a host or client nobody disposed lets the program end once its work is done.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

let inFlight = 0
let timer: ReturnType<typeof setInterval> | undefined

/** One more operation in flight; the returned function ends it (once, however often it is called). @internal */
export const acquire = (): (() => void) => {
  inFlight++
  // The longest interval a timer takes: it never fires, it only holds the loop.
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

/** Whether anything of the library holds the loop now (for tests). @internal */
export const holding = (): boolean => inFlight > 0

/** A sleep of the library's own background work, which never holds the loop. @internal */
export const sleep = (duration: Duration.DurationInput): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Math.min(Duration.toMillis(duration), 2 ** 31 - 1))
    timer.unref()
    return Effect.sync(() => clearTimeout(timer))
  })

/** Runs `effect` with the loop held, however it ends. @internal */
export const held = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(acquire),
    () => effect,
    (release) => Effect.sync(release)
  )

/** A stream that holds the loop from its first pull until it ends or is abandoned (an `events` subscription). @internal */
export const heldStream = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(Effect.sync(acquire), (release) => Effect.sync(release)),
      () => stream
    )
  )

/** Each operation of a service whose result is an Effect or a Stream, run with the loop held. @internal */
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
