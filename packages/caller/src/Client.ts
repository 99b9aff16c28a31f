/**
 * The Promise client over a plane: every request of the operation table, checked in the calling thread (C16), then
 * carried by the thread plane of this process's host, or with `connect` by the socket plane of a host's listener.
 * It loads nothing but this package: a fresh thread pays for an empty thread and one message per call.
 *
 * ```ts
 * const mcp = makeClient()
 * const result = await mcp.callTool(id, "increment", {}, { timeout: 5_000, signal })
 * await mcp.dispose()
 * ```
 *
 * @since 0.1.0
 */
// `Symbol.asyncDispose` is in the declarations: they name the lib that has it, for a program whose own lib does not.
/// <reference lib="esnext.disposable" preserve="true" />
import * as Binding from "./Binding.js"
import { InvalidInput, invalid, ok } from "./McpWorkerError.js"
import type * as JsonValue from "./JsonValue.js"
import * as Operations from "./Operations.js"
import type * as Options from "./Options.js"
import type * as Plane from "./Plane.js"
import type * as ResultFile from "./ResultFile.js"
import * as ThreadPlane from "./internal/thread/index.js"

/**
 * A budget: milliseconds, or a duration string such as `"5 seconds"` or `"300 millis"`.
 *
 * @since 0.1.0
 * @category models
 */
export type Timeout = number | string

/**
 * Options of every request: a budget, and a signal that stays in the calling thread.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** The whole wait budget of the request. Default: the config's `timeoutMs`, else 30 s. */
  readonly timeout?: Timeout | undefined
  /**
   * Stays in the calling thread. Aborting it cancels exactly this request at the server and rejects with
   * `DeliveryUnknown{reason: "interrupted"}`; a signal aborted before the request left this thread (already aborted,
   * or aborted right after the call) sends nothing and rejects with `signal.reason` (C66).
   */
  readonly signal?: AbortSignal | undefined
}

/**
 * Options of `open`: as the host reads them, with a budget as a Promise caller writes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends Options.Open<Timeout> {}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions extends Options.Close<Timeout> {}

/**
 * Options of `events`.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventsOptions extends Options.Events {}

/**
 * Options of `describe`: those of the rendering, and of each `listTools` page.
 *
 * @since 0.1.0
 * @category models
 */
export interface DescribeOptions extends RequestOptions, Options.Rendering {}

/**
 * Options of `makeClient`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /**
   * The socket path of a host's listener (`NodeMcpWorkers.layerListen`): the client then works from any process of
   * the machine, by grant, instead of from a thread of the host's process.
   */
  readonly connect?: string | undefined
}

/**
 * The default number of notifications waiting for one `events` subscriber.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultEventsCapacity = 256

/**
 * The largest `events` capacity.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxEventsCapacity = 65_536

/**
 * A subscriber's capacity, or the `InvalidInput` naming where it is when it is not a whole number in range (C30).
 *
 * @since 0.1.0
 * @category constructors
 */
export const capacityOf = (options: EventsOptions | undefined): Operations.Checked<number> => {
  const capacity: unknown = options?.capacity
  if (capacity === undefined) return ok(defaultEventsCapacity)
  return typeof capacity === "number" && Number.isInteger(capacity) && capacity >= 1 && capacity <= maxEventsCapacity
    ? ok(capacity)
    : invalid("arguments", "options.capacity", `must be a whole number from 1 to ${maxEventsCapacity}`)
}

/**
 * What a request answers here: the server's result, a JSON object (`@mcp-worker/node/PromiseClient` types each one as
 * the MCP SDK declares it).
 *
 * @since 0.1.0
 * @category models
 */
export type Result = { readonly [key: string]: unknown }

/**
 * A request as an async function answering `A`: the worker id, the arguments `Args`, then the options `Options` with
 * `RequestOptions`. Given `saveTo`, a call whose options offer it answers a `SavedResult`.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestFnOf<Args extends ReadonlyArray<unknown>, Options, A> = Options extends Operations.CallToolOptions
  ? ((
      id: string,
      ...rest: [...Args, options: Omit<Options, "timeout"> & RequestOptions & { readonly saveTo: string }]
    ) => Promise<ResultFile.SavedResult>) &
      ((id: string, ...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>)
  : (id: string, ...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>

/**
 * A request of the operation table as an async function: the worker id, the operation's arguments, then its options
 * with `RequestOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options> ? RequestFnOf<Args, Options, Result> : never

/**
 * Every request of the operation table (`listTools`, `callTool`, `readResource`, `getPrompt`…) as an async function.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = { readonly [K in keyof Operations.Requests]: RequestFn<Operations.Requests[K]> }

/**
 * The options of a bound tool's call: `callTool`'s own.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCallOptions = Omit<Operations.CallToolOptions, "timeout"> & RequestOptions

/**
 * One tool as a Promise method (rejecting with the same tagged errors).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolMethod {
  (
    args: JsonValue.JsonObject | undefined,
    options: ToolCallOptions & { readonly saveTo: string }
  ): Promise<ResultFile.SavedResult>
  (args?: JsonValue.JsonObject, options?: ToolCallOptions): Promise<Result>
}

/**
 * Every operation of a worker as a Promise, rejecting with the tagged errors of `McpWorkerError`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Client extends Requests {
  /** Opens a worker owned by the host (it outlives this thread); resolves with its id. */
  readonly open: (config: unknown, options?: OpenOptions) => Promise<string>
  readonly status: (id: string) => Promise<Plane.WorkerStatus>
  readonly cancel: (id: string, requestId: string) => Promise<void>
  readonly close: (id: string, options?: CloseOptions) => Promise<Plane.WorkerStatus>
  /** TypeScript declarations of the worker's tools, every page of `tools/list`. */
  readonly describe: (id: string, options?: DescribeOptions) => Promise<string>
  /** The worker's tools as methods (`tools.get_sum({ a, b }, { signal })`), each `callTool` with the tool's name. */
  readonly tools: (id: string, options?: RequestOptions) => Promise<Binding.Binding<ToolMethod>>
  /**
   * The worker's server notifications from this call on, as an async iterator. Leaving the loop unsubscribes; the
   * iterator ends when the worker closes or its connection is gone (C30).
   */
  readonly events: (
    id: string,
    options?: EventsOptions
  ) => AsyncIterableIterator<Plane.ServerNotification> & AsyncDisposable
  /** Closes this client's channels (not the workers: they belong to the host). Calls in flight are interrupted. */
  readonly dispose: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * What a surface with more than this package adds to the client: the checks that need the platform (proxies, paths
 * to write results to), the config checks of `open`, and the rendering of `describe`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly context?: Operations.ParamsContext | undefined
  readonly prepareOpen?: Plane.PrepareOpen | undefined
  readonly render?:
    ((tools: ReadonlyArray<unknown>, options: DescribeOptions | undefined) => Promise<string>) | undefined
}

/**
 * Makes a client. Nothing starts until the first call; idle, it never keeps the thread (or process) alive.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeClient = (options?: MakeOptions): Client => make(options, {})

/**
 * `makeClient` with what a surface adds (`Environment`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: MakeOptions | undefined, environment: Environment): Client => {
  const connect = options?.connect
  const plane: Plane.Plane = connect === undefined ? ThreadPlane.make() : socketPlane(connect)
  let disposed = false
  const context = environment.context ?? {}
  const notDisposed = <A>(f: () => Promise<A>): Promise<A> =>
    disposed ? Promise.reject(disposedError("the mcp-worker client was disposed")) : f()

  const requests = Object.fromEntries(
    Object.entries(Operations.requests as Record<string, Operations.Any>).map(([name, operation]) => [
      name,
      (id: unknown, ...rest: Array<unknown>) => {
        const options = rest[operation.arity] as (Operations.CallToolOptions & RequestOptions) | undefined
        const signal = options?.signal
        if (signal?.aborted === true) return Promise.reject(signal.reason)
        // Every positional argument in its place (an optional one left out is `undefined`), then the options.
        const args = Array.from({ length: operation.arity }, (_, i) => rest[i])
        const prepared = Operations.prepareFor(operation, id, args, options, context)
        if (!prepared.ok) return Promise.reject(prepared.error)
        const { workerId, params, budgetMs, idleMs, saveTo, spill } = prepared.value
        const onProgress = options?.onProgress
        // C66: the request leaves this thread a moment after the call, so a signal aborted right after it sends nothing.
        const answer = Promise.resolve().then(() =>
          notDisposed(() =>
            plane.request({
              workerId,
              operation: name,
              method: operation.method,
              params,
              budgetMs,
              idleMs,
              saveTo,
              spill,
              onProgress,
              signal
            })
          )
        )
        return operation.answer === undefined ? answer : answer.then(operation.answer)
      }
    ])
  ) as unknown as Requests

  const withId = <A>(id: unknown, path: "workerId" | "requestId", f: (id: string) => Promise<A>): Promise<A> => {
    const checked = Operations.checkId(id, path)
    return checked.ok ? notDisposed(() => f(checked.value)) : Promise.reject(checked.error)
  }

  const allTools = (id: string, options: RequestOptions | undefined) =>
    listAllTools(
      (page) =>
        requests.listTools(id, { ...options, ...page }) as Promise<{
          readonly tools: ReadonlyArray<unknown>
          readonly nextCursor?: string
        }>
    )

  const open = openOn(plane, environment.prepareOpen)

  const dispose = () => {
    disposed = true
    return plane.dispose()
  }

  return {
    ...requests,
    open: (config, openOptions) => notDisposed(() => open(config, openOptions)),
    status: (id) => withId(id, "workerId", (workerId) => plane.status(workerId)),
    cancel: (id, requestId) =>
      withId(id, "workerId", (workerId) =>
        withId(requestId, "requestId", (request) => plane.cancel(workerId, request))
      ),
    close: (id, closeOptions) =>
      withId(id, "workerId", (workerId) => {
        // Like the host's `close`: an unusable budget falls back to the default one (close reports no InvalidInput).
        const budget = Operations.budgetOf(closeOptions?.timeout)
        return plane.close(workerId, budget.ok ? budget.value : undefined)
      }),
    describe: (id, describeOptions) =>
      environment.render === undefined
        ? Promise.reject(needsCore("describe"))
        : allTools(id, describeOptions).then((tools) => environment.render!(tools, describeOptions)),
    tools: (id, toolsOptions) =>
      allTools(id, toolsOptions).then(
        (tools) => Binding.bind(requests.callTool as any, id, tools as Binding.ToolList) as Binding.Binding<ToolMethod>
      ),
    events: (id, eventsOptions) => {
      const checked = Operations.checkId(id, "workerId")
      if (!checked.ok) return ThreadPlane.failedIterator(checked.error)
      const capacity = capacityOf(eventsOptions)
      if (!capacity.ok) return ThreadPlane.failedIterator(capacity.error)
      return disposed
        ? ThreadPlane.failedIterator(disposedError("the mcp-worker client was disposed"))
        : plane.events(checked.value, capacity.value)
    },
    dispose,
    [Symbol.asyncDispose]: dispose
  }
}

/**
 * The most pages `tools` and `describe` read: a server whose cursors never end is not followed forever.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPages = 1000

/**
 * Every tool of a worker: `listTools` page after page while the server gives a new `nextCursor` (at most
 * `maxPages`; a cursor seen before ends the list).
 *
 * @since 0.1.0
 * @category utils
 */
export const listAllTools = async <T>(
  listTools: (page: { readonly cursor?: string }) => Promise<{
    readonly tools: ReadonlyArray<T>
    readonly nextCursor?: string | undefined
  }>
): Promise<ReadonlyArray<T>> => {
  const tools: Array<T> = []
  const seen = new Set<string>()
  let cursor: string | undefined = undefined
  for (let page = 0; page < maxPages; page++) {
    const result = await listTools(cursor === undefined ? {} : { cursor })
    tools.push(...result.tools)
    cursor = nextPage(seen, result.nextCursor)
    if (cursor === undefined) break
  }
  return tools
}

/**
 * The cursor of the page after one whose `nextCursor` is `next`, or `undefined` when the list has ended: no cursor,
 * or one seen before (`seen` records it).
 *
 * @since 0.1.0
 * @category utils
 */
export const nextPage = (seen: Set<string>, next: unknown): string | undefined => {
  if (typeof next !== "string" || seen.has(next)) return undefined
  seen.add(next)
  return next
}

/**
 * The `AbortError` a call rejects with when its client was disposed, or the call was abandoned.
 *
 * @since 0.1.0
 * @category errors
 */
export const disposedError: (message: string) => Error = ThreadPlane.disposedError

// internal

// `open` checks its config where it is called (C18), with the checks the environment has.
const openOn = (plane: Plane.Plane, prepareOpen: Plane.PrepareOpen | undefined) =>
  prepareOpen === undefined
    ? () => Promise.reject<string>(needsOpenChecks())
    : (config: unknown, options: OpenOptions | undefined) =>
        prepareOpen(config, options ?? {}).then((prepared) => plane.open(prepared))

const needsOpenChecks = () =>
  new InvalidInput({
    where: "config",
    path: "config",
    message:
      "open checks the config with @mcp-worker/core: use makePromiseClient of @mcp-worker/node, or open the worker in " +
      "the host",
    delivery: "not_sent"
  })

const needsCore = (operation: string) =>
  new InvalidInput({
    where: "arguments",
    path: operation,
    message: `${operation} renders with @mcp-worker/core: use makePromiseClient of @mcp-worker/node`,
    delivery: "not_sent"
  })

// The socket plane is loaded on first use, as NodeMcpWorkers.layerConnect loads its client (C2).
const socketPlane = (path: string): Plane.Plane => {
  let loaded: Promise<Plane.Plane> | undefined
  const plane = (): Promise<Plane.Plane> =>
    (loaded ??= import("./internal/socket/index.js" as string).then(
      (socket: { readonly make: (options: { readonly path: string }) => Plane.Plane }) => socket.make({ path }),
      () => {
        throw new InvalidInput({
          where: "arguments",
          path: "options.connect",
          message: "this build of @mcp-worker/caller has no socket plane",
          delivery: "not_sent"
        })
      }
    ))
  return {
    request: (call) => plane().then((p) => p.request(call)),
    open: (prepared) => plane().then((p) => p.open(prepared)),
    status: (workerId) => plane().then((p) => p.status(workerId)),
    cancel: (workerId, requestId) => plane().then((p) => p.cancel(workerId, requestId)),
    close: (workerId, budgetMs) => plane().then((p) => p.close(workerId, budgetMs)),
    events: (workerId, capacity) => lazyIterator(plane().then((p) => p.events(workerId, capacity))),
    dispose: () =>
      loaded === undefined
        ? Promise.resolve()
        : loaded.then(
            (p) => p.dispose(),
            () => {}
          )
  }
}

/**
 * An iterator over one that is made later: reads wait for it; leaving before it exists leaves it once it does.
 *
 * @since 0.1.0
 * @category utils
 */
export const lazyIterator = <A>(
  later: Promise<AsyncIterableIterator<A> & AsyncDisposable>
): AsyncIterableIterator<A> & AsyncDisposable => {
  later.catch(() => {})
  const iterator: AsyncIterableIterator<A> & AsyncDisposable = {
    next: () => later.then((it) => it.next()),
    return: () =>
      later.then(
        (it) => it.return?.() ?? { done: true, value: undefined },
        () => ({ done: true, value: undefined })
      ),
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: () =>
      later.then(
        (it) => it[Symbol.asyncDispose](),
        () => {}
      )
  }
  return iterator
}
