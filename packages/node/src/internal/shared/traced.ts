/**
 * Spans for the request path, opened only when tracing is on: a tracer other than Effect's default one is installed
 * and `Effect.withTracerEnabled(false)` is not in force. The default tracer never exports spans, yet each one draws
 * random ids for ~10 µs — a tenth of what a whole thread hop adds to a call — so without a real tracer no span work
 * is done at all.
 *
 * A span's context crosses threads with the message that carries its work (`OwnerProtocol.TraceContext`:
 * `[traceId, spanId, sampled]`, as `@effect/platform`'s Worker sends it), so that one call is one trace. A call made
 * while tracing is off carries none, and the other side then opens no span for it.
 */
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

/** Whether `fiber` records spans, by the same rule as `traced`: for code that reads its fiber anyway. @internal */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== defaultTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)

/** The context of `fiber`'s current span, to send with a message that carries its work on. @internal */
export const contextOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): TraceContext | undefined => {
  const span = fiber.currentSpan
  return span === undefined ? undefined : contextOfSpan(span)
}

/**
 * A span's ids with the W3C `tracestate` and `baggage` its trace carries (C84): what a message brought (`withParent`,
 * `startSpan`), else an OpenTelemetry span's trace state and the OpenTelemetry context's baggage.
 *
 * @internal
 */
export const contextOfSpan = (span: Tracer.AnySpan): TraceContext => {
  const carried = carriedOf(span)
  const tracestate = carried?.[0] ?? ""
  const baggage = carried?.[1] || otelBaggage()
  return tracestate === "" && baggage === ""
    ? [span.traceId, span.spanId, span.sampled]
    : [span.traceId, span.spanId, span.sampled, tracestate, baggage]
}

// What a message brought besides the ids of its span, on the external span made of them, for the spans below it.
const Carried = Context.GenericTag<"@mcp-worker/node/TraceCarried", readonly [tracestate: string, baggage: string]>(
  "@mcp-worker/node/TraceCarried"
)

// `@effect/opentelemetry`'s key of the trace state of an external span made of an OpenTelemetry span context.
const OtelTraceState = Context.GenericTag<"OtelTraceState", { readonly serialize: () => string }>(
  "@effect/opentelemetry/Tracer/OtelTraceState"
)

// An `@effect/opentelemetry` span wraps the OpenTelemetry span it started, whose context holds its trace state.
interface OtelSpanLike {
  readonly span?: { readonly spanContext?: () => { readonly traceState?: { readonly serialize: () => string } } }
}

// The nearest span of the same trace, from `span` up, that knows its trace state or carries what a message brought.
const carriedOf = (span: Tracer.AnySpan): readonly [string, string] | undefined => {
  let current: Tracer.AnySpan | undefined = span
  while (current !== undefined && current.traceId === span.traceId) {
    const carried = Context.getOrElse(current.context, Carried, () => undefined)
    if (carried !== undefined) return carried
    const state =
      (current as OtelSpanLike).span?.spanContext?.().traceState ??
      Context.getOrElse(current.context, OtelTraceState, () => undefined)
    const tracestate = state?.serialize() ?? ""
    if (tracestate !== "") return [tracestate, ""]
    current = current._tag === "Span" ? Option.getOrUndefined(current.parent) : undefined
  }
  return undefined
}

// `@opentelemetry/api` keeps its registered services on the global object under this key (major version 1), and the
// baggage in a context under the other; read through them, so no OpenTelemetry package is needed to run.
const otelApiKey = Symbol.for("opentelemetry.js.api.1")
const otelBaggageKey = Symbol.for("OpenTelemetry Baggage Key")

interface OtelBaggageLike {
  readonly getAllEntries: () => ReadonlyArray<
    readonly [string, { readonly value: string; readonly metadata?: { readonly toString: () => string } }]
  >
}

// The W3C text of the active OpenTelemetry context's baggage, as its propagator writes it; `""` when there is none.
const otelBaggage = (): string => {
  const api = (globalThis as Record<symbol, { readonly context?: { readonly active?: () => unknown } } | undefined>)[
    otelApiKey
  ]
  const active = api?.context?.active?.() as { readonly getValue?: (key: symbol) => unknown } | undefined
  const baggage = active?.getValue?.(otelBaggageKey) as OtelBaggageLike | undefined
  if (baggage === undefined) return ""
  return baggage
    .getAllEntries()
    .map(
      ([key, entry]) =>
        `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}` +
        (entry.metadata === undefined ? "" : `;${entry.metadata.toString()}`)
    )
    .join(",")
}

/**
 * Runs `effect` as part of the span of another thread, when a message carried one: its spans become children of it.
 *
 * @internal
 */
export const withParent = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  parent: TraceContext | undefined
): Effect.Effect<A, E, R> => (parent === undefined ? effect : Effect.withParentSpan(effect, externalOf(parent)))

const externalOf = ([traceId, spanId, sampled, tracestate, baggage]: TraceContext): Tracer.ExternalSpan =>
  Tracer.externalSpan({
    traceId,
    spanId,
    sampled,
    ...(tracestate === undefined && baggage === undefined
      ? {}
      : { context: Context.make(Carried, [tracestate ?? "", baggage ?? ""]) })
  })

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
 * Opens a span outside any fiber, as the child of a span of another thread. The attributes name things, never
 * values that may be secret.
 *
 * @internal
 */
export const startSpan = (
  tracing: Tracing,
  name: string,
  parent: TraceContext,
  attributes: Record<string, unknown>
): Tracer.Span => {
  const span = tracing.tracer.span(
    name,
    Option.some(externalOf(parent)),
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
