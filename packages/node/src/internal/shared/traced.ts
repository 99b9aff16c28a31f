/**
 * Spans for the request path, opened only when tracing is on: a tracer other than Effect's default one is installed
 * and `Effect.withTracerEnabled(false)` is not in force. The default tracer never exports spans, yet each one draws
 * random ids for ~10 µs — a tenth of what a whole thread hop adds to a call — so without a real tracer no span work
 * is done at all.
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Tracer from "effect/Tracer"

// The tracer every fiber has until `Effect.withTracer` or a tracer layer replaces it: Effect's own default service.
const defaultTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** @internal */
export const traced =
  (name: string, attributes: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.tracerWith((tracer) =>
      tracer === defaultTracer
        ? effect
        : FiberRef.getWith(FiberRef.currentTracerEnabled, (enabled) =>
            enabled ? Effect.withSpan(effect, name, { attributes, captureStackTrace: false }) : effect
          )
    )

/** Whether `fiber` records spans, by the same rule as `traced`: for code that reads its fiber anyway. @internal */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== defaultTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)
