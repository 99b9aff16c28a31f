/**
 * Spans for the request path, opened only when tracing is on: a tracer other than Effect's default one is installed
 * and `Effect.withTracerEnabled(false)` is not in force. The default tracer never exports spans, yet each one draws
 * random ids for ~10 µs — a tenth of what a whole thread hop adds to a call — so without a real tracer no span work
 * is done at all. A span the caller opened is still sent, whatever its tracer (C83): its ids are already drawn.
 *
 * A span's context crosses threads with the message that carries its work (`OwnerProtocol.TraceContext`:
 * `[traceId, spanId, sampled]`, as `@effect/platform`'s Worker sends it), so that one call is one trace. A call made
 * outside any span, or with tracing off, carries none.
 */
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import type { TraceContext } from "@mcp-worker/core/OwnerProtocol"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
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

/**
 * `traced`, with the trace context a request sends handed to `f`: its own span's when tracing is on, else the
 * caller's span's whatever its tracer (C83), `undefined` outside any span — one read of the fiber, so an untraced call
 * costs nothing more.
 *
 * @internal
 */
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

/** Whether `fiber` records spans, by the same rule as `traced`: for code that reads its fiber anyway. @internal */
export const isTracing = OwnerProtocol.isTracing

/** The context of `fiber`'s current span, to send with a message that carries its work on (C83). @internal */
export const contextOf = OwnerProtocol.traceContextOfFiber

/**
 * Runs `effect` as part of the span of another thread, when a message carried one: its spans become children of it.
 *
 * @internal
 */
export const withParent = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  parent: TraceContext | undefined
): Effect.Effect<A, E, R> => (parent === undefined ? effect : Effect.withParentSpan(effect, externalOf(parent)))

const externalOf = OwnerProtocol.externalSpanOf

/**
 * What opens spans outside any fiber, for work that runs in the step that reads a message (the host's relay of a
 * request, the owner's handling of one): the tracer and clock of a fiber that was tracing.
 *
 * @internal
 */
export interface Tracing {
  readonly tracer: Tracer.Tracer
  readonly clock: Clock.Clock
}

/** The tracing of `fiber`, or `undefined` when it records no spans. @internal */
export const tracingOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): Tracing | undefined =>
  isTracing(fiber)
    ? {
        tracer: fiber.currentTracer,
        clock: Context.get(fiber.getFiberRef(DefaultServices.currentServices), Clock.Clock)
      }
    : undefined

/**
 * The tracing of this thread's runtime as it is by default, outside any layer: for a thread whose runtime no caller
 * builds (an owner thread). `undefined`, unless something in the thread made a real tracer its default service.
 *
 * @internal
 */
export const threadTracing = (): Tracing | undefined => Effect.runSync(currentTracing)

/** The tracing of the fiber that runs this, for what it starts outside any fiber later. @internal */
export const currentTracing: Effect.Effect<Tracing | undefined> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(tracingOf(fiber))
)

/**
 * Opens a span outside any fiber, as the child of a span of another thread (`undefined`: a root). The attributes name
 * things, never values that may be secret.
 *
 * @internal
 */
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

/** Ends a span that `startSpan` opened. @internal */
export const endSpan = (tracing: Tracing, span: Tracer.Span, exit: Exit.Exit<unknown, unknown>): void =>
  span.end(tracing.clock.unsafeCurrentTimeNanos(), exit)
