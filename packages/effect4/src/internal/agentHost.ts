// The implementation's own operations, so everything is exactly core's; errors become this package's (C69).
import * as Effect from "effect/Effect"
import type * as AgentHost from "../AgentHost.js"
import type * as McpWorkers from "../McpWorkers.js"
import * as Face from "./face.js"
import type { EntryResult, Surface } from "./implementation.js"

type Entries = Readonly<Record<string, EntryResult>>

// defineProperty keeps "__proto__" an ordinary key.
const fromEntries = <A>(entries: Iterable<readonly [string, A]>): Record<string, A> => {
  const out: Record<string, A> = {}
  for (const [key, value] of entries) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

const entriesOf = <R>(entries: Entries): Effect.Effect<Readonly<Record<string, R>>> =>
  Effect.forEach(Object.entries(entries), ([name, entry]) =>
    entry._tag !== "Failed"
      ? Effect.succeed([name, entry as R] as const)
      : Effect.map(Effect.flip(Face.failureOf(entry.error)), (error) => [name, { ...entry, error } as R] as const)
  ).pipe(Effect.map(fromEntries))

const openAllOptionsOf = (options: AgentHost.OpenAllOptions | undefined) =>
  options === undefined
    ? undefined
    : {
        ...options,
        inputs: Face.revealSecrets(options.inputs),
        open: Face.openOptionsOf(options.open),
        entries:
          options.entries === undefined
            ? undefined
            : fromEntries(Object.entries(options.entries).map(([name, open]) => [name, Face.openOptionsOf(open)]))
      }

const bindingOf = (
  id: string,
  methods: { readonly [method: string]: (args?: unknown, options?: unknown) => Promise<unknown> }
): AgentHost.Binding => {
  const binding = Object.create(null) as Record<string, AgentHost.EffectMethod>
  for (const [method, f] of Object.entries(methods)) {
    binding[method] = ((args?: unknown, options?: McpWorkers.CallToolOptions) =>
      Face.call((signal) => f(args, Face.requestOptionsOf(options, signal))).pipe(
        Effect.withSpan("McpWorkers.callTool", { attributes: { workerId: id, method } }, { captureStackTrace: false })
      )) as AgentHost.EffectMethod
  }
  return Object.freeze(binding)
}

/** @internal */
export const make = (surface: Surface): AgentHost.AgentHost => ({
  openAll: (document, options) =>
    Face.call<Entries, never>(
      () => surface.openAll(Face.revealSecrets(document), openAllOptionsOf(options)),
      // The caller never holds ids it was not given.
      (entries) => surface.closeAll(entries)
    ).pipe(
      Effect.orDie,
      Effect.flatMap(entriesOf),
      Effect.withSpan("McpWorkers.openAll", { attributes: { entries: Object.keys(document.servers).length } })
    ) as ReturnType<AgentHost.AgentHost["openAll"]>,
  closeAll: (workers, options) =>
    Face.call<Entries, never>(() =>
      surface.closeAll(workers, { ...options, timeout: Face.timeoutOf(options?.timeout) as number | string })
    ).pipe(Effect.orDie, Effect.flatMap(entriesOf), Effect.withSpan("McpWorkers.closeAll")) as ReturnType<
      AgentHost.AgentHost["closeAll"]
    >,
  describe: (id, options) =>
    Face.call<string, any>((signal) => surface.describe(id, Face.requestOptionsOf(options, signal))).pipe(
      Effect.withSpan("McpWorkers.describe", { attributes: { workerId: id } })
    ),
  tools: (id, options) =>
    Face.call<Parameters<typeof bindingOf>[1], any>((signal) =>
      surface.tools(id, Face.requestOptionsOf(options, signal))
    ).pipe(
      Effect.map((methods) => bindingOf(id, methods)),
      Effect.withSpan("McpWorkers.tools", { attributes: { workerId: id } })
    )
})
