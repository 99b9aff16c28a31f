// The default tracer draws ids for ~10 µs (a tenth of a thread hop) and exports nothing: no spans without a real
// tracer. C83
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { TraceContext } from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

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

/** C83: one read of the fiber, so an untraced call costs nothing. @internal */
export const tracedWith = <A, E, R>(
  name: string,
  attributes: Record<string, unknown>,
  f: (trace: TraceContext | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    isTracing(fiber)
      ? Effect.withSpan(
          Effect.withFiberRuntime((inner) => f(contextOf(inner))),
          name,
          { attributes, captureStackTrace: false }
        )
      : f(contextOf(fiber))
  )

/** @internal */
export const isTracing = OwnerProtocol.isTracing

/** C83 @internal */
export const contextOf = OwnerProtocol.traceContextOfFiber

/** @internal */
export const withParent = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  parent: TraceContext | undefined
): Effect.Effect<A, E, R> => (parent === undefined ? effect : Effect.withParentSpan(effect, externalOf(parent)))

const externalOf = OwnerProtocol.externalSpanOf

/** Outside any fiber. @internal */
export interface Tracing {
  readonly tracer: Tracer.Tracer
  readonly clock: Clock.Clock
}

/** @internal */
export const tracingOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): Tracing | undefined =>
  isTracing(fiber)
    ? {
        tracer: fiber.currentTracer,
        clock: Context.get(fiber.getFiberRef(DefaultServices.currentServices), Clock.Clock)
      }
    : undefined

/** For an owner thread, whose runtime no caller builds. @internal */
export const threadTracing = (): Tracing | undefined => Effect.runSync(currentTracing)

/** @internal */
export const currentTracing: Effect.Effect<Tracing | undefined> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(tracingOf(fiber))
)

/** Never values that may be secret. @internal */
export const startSpan = (
  tracing: Tracing,
  name: string,
  parent: TraceContext | undefined,
  attributes: Record<string, unknown>
): Tracer.Span => {
  const span = tracing.tracer.span(
    name,
    parent === undefined ? Option.none() : Option.some(externalOf(parent)),
    Context.empty(),
    [],
    tracing.clock.unsafeCurrentTimeNanos(),
    "server"
  )
  for (const key of Object.keys(attributes)) span.attribute(key, attributes[key])
  return span
}

/** @internal */
export const endSpan = (tracing: Tracing, span: Tracer.Span, exit: Exit.Exit<unknown, unknown>): void =>
  span.end(tracing.clock.unsafeCurrentTimeNanos(), exit)
