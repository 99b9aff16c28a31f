/**
 * `McpWorkers` as plain async functions, for code that is not written with Effect: an agent's `execute_code`
 * snippet, a script, a test. It works in any thread of a process whose host (`NodeMcpWorkers.layer()`) runs in some
 * thread, this one included, and rejects with the same tagged error objects as the Effect API (`_tag`, fields,
 * `message`; instances of the `@mcp-worker/core/McpWorkerError` classes).
 *
 * ```ts
 * const mcp = makePromiseClient()
 * const result = await mcp.callTool(id, "increment", {}, { timeout: 5_000, signal })
 * await mcp.dispose()
 * ```
 *
 * @since 0.1.0
 */
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Remote from "./internal/remote/layer.js"
import * as McpClient from "./McpClient.js"
import type { Handlers } from "./NodeMcpWorkers.js"

/**
 * A budget: milliseconds, or a duration string such as `"5 seconds"` or `"300 millis"`.
 *
 * @since 0.1.0
 * @category models
 */
export type Timeout = number | string

/**
 * Options of `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  /** Budget for the thread to start and the server to complete `initialize`. */
  readonly timeout?: Timeout | undefined
  /** Where the owner runs: a thread of the host (the default) or a child process of its own. */
  readonly isolation?: "thread" | "process" | undefined
  /** The owner's V8 heap limit in MB, a whole number from 16 to 65,536: an owner past it dies, the host does not. */
  readonly maxOldGenerationSizeMb?: number | undefined
}

/**
 * Options of `callTool`: a budget, and a signal that stays in the calling thread.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** The whole wait budget of the request. Default: the config's `timeoutMs`, else 30 s. */
  readonly timeout?: Timeout | undefined
  /**
   * Stays in the calling thread. Aborting it cancels exactly this request at the server (`notifications/cancelled`)
   * and rejects with `DeliveryUnknown{reason: "interrupted"}`; a signal aborted before the request left this thread
   * (already aborted, or aborted right after the call) sends nothing and rejects with `signal.reason`.
   */
  readonly signal?: AbortSignal | undefined
}

/**
 * Options of `listTools`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListToolsOptions extends RequestOptions {
  readonly cursor?: string | undefined
}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions {
  /** Budget for ending the connection and confirming cleanup. Default: 5 s. */
  readonly timeout?: Timeout | undefined
}

/**
 * The six operations of `McpWorkers` as Promises, plus `dispose`.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options, infer A>
    ? Options extends Operations.CallToolOptions
      ? ((
          id: string,
          ...rest: [...Args, options: Omit<Options, "timeout"> & RequestOptions & { readonly saveTo: string }]
        ) => Promise<Operations.SavedResult>) &
          ((id: string, ...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>)
      : (id: string, ...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>
    : never

/**
 * Every request of the operation table (`listTools`, `callTool`, `listResources`, `readResource`, `getPrompt`…)
 * as an async function: the same arguments as on `McpWorkers`, with `RequestOptions` last.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = { readonly [K in keyof Operations.Requests]: RequestFn<Operations.Requests[K]> }

/**
 * Every operation of `McpWorkers` as a Promise, rejecting with the same tagged errors.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseClient extends Requests {
  /** Opens a worker owned by the host (it outlives this thread); resolves with its id. */
  readonly open: (config: ServerConfigInput, options?: OpenOptions) => Promise<string>
  readonly status: (id: string) => Promise<WorkerStatus>
  readonly cancel: (id: string, requestId: string) => Promise<void>
  readonly close: (id: string, options?: CloseOptions) => Promise<WorkerStatus>
  /**
   * The worker's server notifications from this call on, as an async iterator (`for await`). Leaving the loop (or
   * `return()`) unsubscribes; the iterator ends when the worker closes or its connection is gone. A subscriber that
   * does not keep up loses the oldest notifications beyond `capacity` (counted in `status().notifications`).
   */
  readonly events: (
    id: string,
    options?: McpWorkers.EventsOptions
  ) => AsyncIterableIterator<McpWorkers.ServerNotification> & AsyncDisposable
  /** Closes this client's channels (not the workers: they belong to the host). Calls in flight are interrupted. */
  readonly dispose: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

class Client extends Context.Tag("@mcp-worker/node/PromiseClient/Client")<Client, Remote.RemoteService>() {}

const disposedError = (message: string) => {
  const error = new Error(message)
  error.name = "AbortError"
  return error
}

// Checked when the call is made (an unreadable timeout rejects with `InvalidInput`), like every other input.
const duration = (timeout: Timeout | undefined) => timeout as Duration.DurationInput | undefined

// An interruption is the client's `dispose`, or the call's own signal aborted before its request was posted.
const rejection = (cause: Cause.Cause<unknown>, signal: AbortSignal | undefined): unknown =>
  Option.getOrElse(Cause.failureOption(cause), () =>
    !Cause.isInterruptedOnly(cause)
      ? Cause.squash(cause)
      : signal?.aborted === true
        ? signal.reason
        : disposedError("the mcp-worker client was disposed while the call was in flight")
  )

/**
 * Makes a client. Nothing starts until the first call; idle, it never keeps the thread alive.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePromiseClient = (): PromiseClient => {
  const runtime = ManagedRuntime.make(Layer.scoped(Client, Remote.make))
  let disposed = false

  const run = <A>(f: (client: Remote.RemoteService) => Effect.Effect<A, unknown>, signal?: AbortSignal): Promise<A> =>
    disposed
      ? Promise.reject(disposedError("the mcp-worker client was disposed"))
      : runtime
          .runPromiseExit(Effect.flatMap(Client, f))
          .then((exit) => (Exit.isSuccess(exit) ? exit.value : Promise.reject(rejection(exit.cause, signal))))

  const abortable = <A>(
    signal: AbortSignal | undefined,
    f: (client: Remote.RemoteService) => Effect.Effect<A, unknown>
  ): Promise<A> => (signal?.aborted === true ? Promise.reject(signal.reason) : run(f, signal))

  const dispose = () => {
    disposed = true
    return runtime.dispose()
  }

  const requests = Object.fromEntries(
    Object.entries(Operations.requests).map(([name, operation]) => [
      name,
      (id: string, ...rest: Array<unknown>) => {
        const startedAt = Date.now()
        const options = rest[operation.arity] as RequestOptions | undefined
        // Every positional argument in its place (an optional one left out is `undefined`), then the options.
        const args = Array.from({ length: operation.arity }, (_, i) => rest[i])
        return abortable(options?.signal, (client) =>
          (client[name as keyof Operations.Requests] as (...all: Array<unknown>) => Effect.Effect<unknown, unknown>)(
            id,
            ...args,
            { ...options, timeout: duration(options?.timeout), startedAt }
          )
        )
      }
    ])
  ) as unknown as Requests

  // Runs `effect` synchronously as far as it goes (a first use also builds the runtime in this step), so a
  // subscription's request is out before this returns; whatever is left runs on and is awaited.
  const subscribeNow = <A, E>(effect: Effect.Effect<A, E, Client>): Promise<Exit.Exit<A, E>> => {
    const exit = runtime.runSyncExit(effect)
    if (Exit.isFailure(exit) && Cause.isDie(exit.cause)) {
      const defect = Cause.squash(exit.cause)
      if (Runtime.isAsyncFiberException(defect)) {
        return runtime.runPromiseExit(Fiber.await(defect.fiber as Fiber.RuntimeFiber<A, E>)).then(Exit.flatten)
      }
    }
    return Promise.resolve(exit)
  }

  const events: PromiseClient["events"] = (id, options) => {
    // The subscription lives in a scope of its own, closed when the caller is done. It is made now, in this call
    // (its request goes out before anything the caller does next), not at the first `next()`.
    const scope = Effect.runSync(Scope.make())
    const subscribed = disposed
      ? Promise.reject(disposedError("the mcp-worker client was disposed"))
      : subscribeNow(Effect.flatMap(Client, (client) => Scope.extend(client.subscribe(id, options), scope)))
    subscribed.catch(() => {})
    // A refused subscription (an unknown worker, a bad capacity) is the first read's failure.
    const read = () =>
      subscribed.then((exit) =>
        Exit.isSuccess(exit)
          ? runtime.runPromiseExit(exit.value)
          : Exit.failCause(Cause.map(exit.cause, (error) => Option.some(error)))
      )
    let ahead: ReturnType<typeof read> | undefined = read()
    let buffered: Array<McpWorkers.ServerNotification> = []
    let finished = false
    const finish = async (): Promise<IteratorResult<McpWorkers.ServerNotification>> => {
      if (!finished) {
        finished = true
        buffered = []
        await runtime.runPromise(Scope.close(scope, Exit.void)).catch(() => {})
      }
      return { done: true, value: undefined }
    }
    const next = async (): Promise<IteratorResult<McpWorkers.ServerNotification>> => {
      while (!finished) {
        const item = buffered.shift()
        if (item !== undefined) return { done: false, value: item }
        const exit = await (ahead ?? read())
        ahead = undefined
        if (Exit.isSuccess(exit)) {
          buffered = Array.from(exit.value)
          continue
        }
        await finish()
        const failure = Cause.failureOption(exit.cause)
        // The end of the stream ends the iteration; a failure (an unknown worker, a bad capacity) rejects.
        if (Option.isSome(failure) && Option.isNone(failure.value)) break
        throw rejection(Cause.map(exit.cause, Option.getOrUndefined), undefined)
      }
      return { done: true, value: undefined }
    }
    const iterator = {
      next,
      return: finish,
      [Symbol.asyncIterator]: () => iterator,
      [Symbol.asyncDispose]: async () => {
        await finish()
      }
    }
    return iterator
  }

  return {
    open: (config, options) =>
      run((client) =>
        client.open(config, {
          timeout: duration(options?.timeout),
          isolation: options?.isolation,
          maxOldGenerationSizeMb: options?.maxOldGenerationSizeMb
        })
      ),
    ...requests,
    status: (id) => run((client) => client.status(id)),
    cancel: (id, requestId) => run((client) => client.cancel(id, requestId)),
    close: (id, options) => run((client) => client.close(id, { timeout: duration(options?.timeout) })),
    events,
    dispose,
    [Symbol.asyncDispose]: dispose
  }
}

/**
 * A request of the operation table on one connection, as an async function: its arguments, then `RequestOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientRequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options, infer A>
    ? (...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>
    : never

/**
 * The connection `withClient` hands its callback: every request of the operation table as a Promise (the same
 * options, budgets and signal as the Promise client), its status and `cancel`.
 *
 * @since 0.1.0
 * @category models
 */
export type ScopedClient = { readonly [K in keyof Operations.Requests]: ClientRequestFn<Operations.Requests[K]> } & {
  /** A fresh id naming this connection in errors and its status (it is not registered anywhere). */
  readonly workerId: string
  readonly status: () => Promise<WorkerStatus>
  readonly cancel: (requestId: string) => Promise<void>
}

/**
 * Options of `withClient`. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win over these.
 *
 * @since 0.1.0
 * @category models
 */
export interface WithClientOptions {
  /** Budget for the server to start and complete `initialize`. */
  readonly timeout?: Timeout | undefined
  /** The budget of a request whose config names no `timeoutMs` (default 30 s). */
  readonly requestTimeout?: Timeout | undefined
  /** The budget of the close once the callback settled (default 5 s). */
  readonly closeTimeout?: Timeout | undefined
  /** The largest answer of a server whose config names no `maxResultBytes` (default 64 MiB). */
  readonly maxResultBytes?: number | undefined
  /** Answers to the requests the server may send its client, run in this thread. */
  readonly handlers?: Handlers | undefined
}

const settled = <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal | undefined): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) =>
    Exit.isSuccess(exit) ? exit.value : Promise.reject(rejection(exit.cause, signal))
  )

const scopedClient = (client: McpClient.McpClient): ScopedClient => {
  const requests = Object.fromEntries(
    Object.entries(Operations.requests).map(([name, operation]) => [
      name,
      (...rest: Array<unknown>) => {
        const options = rest[operation.arity] as RequestOptions | undefined
        const signal = options?.signal
        // Aborted before the call: nothing is sent. Aborted later: the request is cancelled at the server.
        if (signal?.aborted === true) return Promise.reject(signal.reason)
        const args = Array.from({ length: operation.arity }, (_, i) => rest[i])
        const run = client[name as keyof Operations.Requests] as (...all: Array<unknown>) => Effect.Effect<unknown>
        return settled(run(...args, { ...options, timeout: duration(options?.timeout) }), signal)
      }
    ])
  )
  return {
    ...(requests as unknown as ScopedClient),
    workerId: client.workerId,
    status: () => settled(client.status, undefined),
    cancel: (requestId) => settled(client.cancel(requestId), undefined)
  }
}

/**
 * Opens one connection in this thread (no host needed), runs `f` with it, and closes it once `f` settles, with the
 * server's whole process tree ended and confirmed; resolves or rejects as `f` did. Opening rejects with the same
 * tagged errors as `open` (`InvalidInput`, `OpenFailed`).
 *
 * ```ts
 * const tools = await withClient(config, (client) => client.listTools({ timeout: 5_000 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withClient = <A>(
  config: ServerConfigInput,
  f: (client: ScopedClient) => Promise<A>,
  options?: WithClientOptions
): Promise<A> =>
  settled(
    McpClient.withClient(
      config,
      (client) => Effect.tryPromise({ try: () => f(scopedClient(client)), catch: (error) => error }),
      {
        timeout: duration(options?.timeout),
        requestTimeout: duration(options?.requestTimeout),
        closeTimeout: duration(options?.closeTimeout),
        maxResultBytes: options?.maxResultBytes,
        handlers: options?.handlers
      }
    ),
    undefined
  )
