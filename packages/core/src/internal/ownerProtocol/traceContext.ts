/** C84: read where a request leaves its caller, kept where it arrives. @internal */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import type { TraceContext } from "./messages.js"

/** What a message brought, else OpenTelemetry's trace state and baggage. @internal */
export const traceContextOf = (span: Tracer.AnySpan): TraceContext => {
  const carried = carriedOf(span)
  const tracestate = carried?.[0] ?? ""
  const baggage = carried?.[1] || otelBaggage()
  return tracestate === "" && baggage === ""
    ? [span.traceId, span.spanId, span.sampled]
    : [span.traceId, span.spanId, span.sampled, tracestate, baggage]
}

const Carried = Context.GenericTag<"@mcp-worker/core/TraceCarried", readonly [tracestate: string, baggage: string]>(
  "@mcp-worker/core/TraceCarried"
)

// Read by name so `@effect/opentelemetry` need not be loaded.
const OtelTraceState = Context.GenericTag<"OtelTraceState", { readonly serialize: () => string }>(
  "@effect/opentelemetry/Tracer/OtelTraceState"
)

interface OtelSpanLike {
  readonly span?: { readonly spanContext?: () => { readonly traceState?: { readonly serialize: () => string } } }
}

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

// `@opentelemetry/api` 1's global keys, so no OpenTelemetry package need load.
const otelApiKey = Symbol.for("opentelemetry.js.api.1")
const otelBaggageKey = Symbol.for("OpenTelemetry Baggage Key")

interface OtelBaggageLike {
  readonly getAllEntries: () => ReadonlyArray<
    readonly [string, { readonly value: string; readonly metadata?: { readonly toString: () => string } }]
  >
}

// As OpenTelemetry's propagator writes it.
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

/** @internal */
export const externalSpanOf = ([traceId, spanId, sampled, tracestate, baggage]: TraceContext): Tracer.ExternalSpan =>
  Tracer.externalSpan({
    traceId,
    spanId,
    sampled,
    ...(tracestate === undefined && baggage === undefined
      ? {}
      : { context: Context.make(Carried, [tracestate ?? "", baggage ?? ""]) })
  })

/** For span ids that arrived another way (an `@effect/rpc` envelope). @internal */
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

// It never exports, so with it no span is recorded.
const defaultTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** C83 @internal */
export const traceContextOfFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>): TraceContext | undefined => {
  const span = fiber.currentSpan
  return span === undefined ||
    !fiber.getFiberRef(FiberRef.currentTracerEnabled) ||
    Context.get(span.context, Tracer.DisablePropagation)
    ? undefined
    : traceContextOf(span)
}

/** Only then does a surface open spans of its own; a caller's span is sent either way. @internal */
export const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== defaultTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)
