/**
 * Spans for the request path, opened only when a real tracer is installed: Effect's default tracer never
 * exports spans, yet each one draws random ids for ~10 µs — a tenth of what a whole thread hop adds to a call.
 */
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"

let defaultTracer: Tracer.Tracer | undefined

/** @internal */
export const traced =
  (name: string, attributes: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.tracerWith((tracer) =>
      tracer === (defaultTracer ??= Effect.runSync(Effect.tracer))
        ? effect
        : Effect.withSpan(effect, name, { attributes, captureStackTrace: false })
    )
