/**
 * What a span's trace carries besides its ids, read where a request leaves its caller and kept where it arrives, so
 * that the W3C `tracestate` and `baggage` reach the server beside `traceparent` (C84) on every surface.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type * as Messages from "./messages.js"

type TraceContext = typeof Messages.TraceContext.Type

/**
 * A span's ids with the W3C `tracestate` and `baggage` its trace carries (C84): what a message brought (its external
 * span, `externalSpanOf`), else an OpenTelemetry span's trace state and the OpenTelemetry context's baggage.
 *
 * @internal
 */
export const traceContextOf = (span: Tracer.AnySpan): TraceContext => {
  const carried = carriedOf(span)
  const tracestate = carried?.[0] ?? ""
  const baggage = carried?.[1] || otelBaggage()
  return tracestate === "" && baggage === ""
    ? [span.traceId, span.spanId, span.sampled]
    : [span.traceId, span.spanId, span.sampled, tracestate, baggage]
}

// What a message brought besides the ids of its span, on the external span made of them, for the spans below it.
const Carried = Context.GenericTag<"@mcp-worker/core/TraceCarried", readonly [tracestate: string, baggage: string]>(
  "@mcp-worker/core/TraceCarried"
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
 * The external span of a message's span context, carrying its trace's `tracestate` and `baggage` for the spans below
 * it.
 *
 * @internal
 */
export const externalSpanOf = ([traceId, spanId, sampled, tracestate, baggage]: TraceContext): Tracer.ExternalSpan =>
  Tracer.externalSpan({
    traceId,
    spanId,
    sampled,
    ...(tracestate === undefined && baggage === undefined
      ? {}
      : { context: Context.make(Carried, [tracestate ?? "", baggage ?? ""]) })
  })

/**
 * Runs `effect` below the current span with what `trace` carries besides its ids: for a request whose span's ids
 * arrived another way (an `@effect/rpc` envelope) and its `tracestate` and `baggage` in its payload.
 *
 * @internal
 */
export const withCarried = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  trace: TraceContext | undefined
): Effect.Effect<A, E, R> =>
  trace === undefined || trace.length < 4
    ? effect
    : Effect.withFiberRuntime((fiber) => {
        const span = fiber.currentSpan
        return span === undefined
          ? effect
          : Effect.withParentSpan(
              effect,
              externalSpanOf([span.traceId, span.spanId, span.sampled, trace[3] ?? "", trace[4] ?? ""])
            )
      })

// The tracer every fiber has until a real one replaces it: it never exports, so with it no span is recorded.
const defaultTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * The trace context a request of `fiber` sends: its current span's, whatever the tracer that made it, unless tracing
 * is turned off (`Effect.withTracerEnabled(false)`, or a span that disables propagation); else `undefined` (C83).
 *
 * @internal
 */
export const traceContextOfFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>): TraceContext | undefined => {
  const span = fiber.currentSpan
  return span === undefined ||
    !fiber.getFiberRef(FiberRef.currentTracerEnabled) ||
    Context.get(span.context, Tracer.DisablePropagation)
    ? undefined
    : traceContextOf(span)
}

/**
 * Whether `fiber` records spans: a tracer other than Effect's default one, `Effect.withTracerEnabled` not false. Only
 * then does a surface open spans of its own; a span the caller opened is sent either way (`traceContextOfFiber`).
 *
 * @internal
 */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== defaultTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)
