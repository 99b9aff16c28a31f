// A real tracer for the trace tests (test/node/Trace.test.ts): it records each span as it ends, as plain data a
// thread can post to another. The owner threads get one too: `traceOwnerThreads` starts them through a bootstrap that
// makes such a tracer the default service of the thread's Effect runtime before the owner bundle loads.
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { createRequire, syncBuiltinESMExports } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { WorkerOptions } from "node:worker_threads"

/** An ended span, as plain data. */
export interface RecordedSpan {
  readonly thread: string
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  /** The parent's id, `undefined` for a root span. */
  readonly parent: string | undefined
  readonly attributes: Record<string, unknown>
}

// W3C ids (32 and 16 hex digits), as real tracers make them: the owner writes them into a request's traceparent.
const hex = (digits: number) =>
  Array.from({ length: digits }, () => Math.floor(Math.random() * 16).toString(16)).join("")
const randomId = () => hex(16)
const randomTraceId = () => hex(32)

/** A tracer that hands each span of `thread` to `record` when it ends. */
export const recordingTracer = (thread: string, record: (span: RecordedSpan) => void): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: randomId(),
        traceId: Option.isSome(parent) ? parent.value.traceId : randomTraceId(),
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        attribute: (key, value) => void attributes.set(key, value),
        event: () => {},
        addLinks: () => {},
        end: () =>
          record({
            thread,
            name,
            traceId: span.traceId,
            spanId: span.spanId,
            parent: Option.isSome(parent) ? parent.value.spanId : undefined,
            attributes: Object.fromEntries(attributes)
          })
      }
      return span
    },
    context: (f) => f()
  })

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// Runs in an owner thread before its entry: the same tracer (in plain JavaScript: the thread runs no TypeScript), posting
// each span on the test's channel, made the default service of every fiber of the thread. Effect keeps its default
// services in a process-wide store, so the one set here is the one the owner bundle's own copy of Effect finds.
const ownerBootstrap = `
const wt = require("node:worker_threads")
const { createRequire } = require("node:module")
const data = wt.workerData.traceTest
const load = createRequire(data.root + "/package.json")
const Context = load("effect/Context")
const DefaultServices = load("effect/DefaultServices")
const FiberRef = load("effect/FiberRef")
const Option = load("effect/Option")
const Tracer = load("effect/Tracer")
const channel = new wt.BroadcastChannel(data.channel)
channel.unref()
const hex = (digits) => Array.from({ length: digits }, () => Math.floor(Math.random() * 16).toString(16)).join("")
const randomId = () => hex(16)
const randomTraceId = () => hex(32)
const tracer = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => {
    const attributes = new Map()
    const span = {
      _tag: "Span", name, spanId: randomId(), traceId: Option.isSome(parent) ? parent.value.traceId : randomTraceId(),
      parent, context, status: { _tag: "Started", startTime }, attributes, links, sampled: true, kind,
      attribute: (key, value) => void attributes.set(key, value),
      event: () => {},
      addLinks: () => {},
      end: () => channel.postMessage({
        thread: "owner", name, traceId: span.traceId, spanId: span.spanId,
        parent: Option.isSome(parent) ? parent.value.spanId : undefined, attributes: Object.fromEntries(attributes)
      })
    }
    return span
  },
  context: (f) => f()
})
globalThis["effect/GlobalValue"].set(
  Symbol.for("effect/DefaultServices/currentServices"),
  FiberRef.unsafeMakeContext(Context.add(DefaultServices.liveServices, Tracer.Tracer, tracer))
)
import(data.entry)
`

/**
 * Owner threads started from now on (until `restore`) record their spans with a recording tracer and post them on
 * the BroadcastChannel `channel`. Swaps `worker_threads.Worker` for ESM importers too (`syncBuiltinESMExports`).
 */
export const traceOwnerThreads = (channel: string): { readonly restore: () => void } => {
  const threads = createRequire(import.meta.url)("node:worker_threads") as {
    Worker: typeof import("node:worker_threads").Worker
  }
  const Original = threads.Worker
  const rewrite = (filename: string | URL, options?: WorkerOptions): [string | URL, WorkerOptions | undefined] => {
    const href = filename instanceof URL ? filename.href : pathToFileURL(filename).href
    if (options?.eval === true || !href.endsWith("/owner/owner.cjs")) return [filename, options]
    const traceTest = { root, channel, entry: href }
    return [ownerBootstrap, { ...options, eval: true, workerData: { ...(options?.workerData as object), traceTest } }]
  }
  class Traced extends Original {
    constructor(filename: string | URL, options?: WorkerOptions) {
      super(...rewrite(filename, options))
    }
  }
  threads.Worker = Traced
  syncBuiltinESMExports()
  return {
    restore: () => {
      threads.Worker = Original
      syncBuiltinESMExports()
    }
  }
}
