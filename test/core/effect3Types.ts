// Type helpers over this repository's Effect (3) for a face written against another Effect: packages/effect4's parity
// test reads core's operations through them, since its own `effect` is Effect 4.
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

/** The failure type of an Effect 3 effect or stream. */
export type FailureOf<T> =
  T extends Effect.Effect<any, infer E, any> ? E : T extends Stream.Stream<any, infer E, any> ? E : never
