/**
 * The Effect side of the Promise surfaces, loaded only when one of them needs it: the checks of an `open` (the config
 * normalized in the calling thread, C18), `openAll` and `closeAll` over a lean client, the Promise host's agent-host
 * operations, `withClient`'s connection in this thread, and the socket client in a runtime of its own (until the
 * socket plane carries `connect`).
 *
 * @internal
 */
import * as AgentHost from "@mcp-worker/core/AgentHost"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import type { ListToolsResult } from "@modelcontextprotocol/client"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import * as ToolBinding from "@mcp-worker/core/ToolBinding"
import * as ToolDeclarations from "@mcp-worker/core/ToolDeclarations"
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
import type * as McpClient from "../McpClient.js"
import type * as McpConfig from "@mcp-worker/core/McpConfig"
import type {
  CloseFailed,
  HostUnavailable,
  InvalidInput,
  OpenFailed,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as OpenAll from "@mcp-worker/core/OpenAll"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import * as Either from "effect/Either"
import type {
  CloseOptions,
  MakeOptions,
  OpenAllOptions,
  OpenOptions,
  PromiseClient,
  RequestOptions,
  ToolCallOptions,
  Requests,
  ScopedClient,
  Timeout,
  WithClientOptions
} from "../PromiseClient.js"
import * as McpClientInternal from "./mcpClient/client.js"
import * as Remote from "./remote/layer.js"
import { openRequest, type OpenRequest } from "./remote/openRequest.js"

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

type ClientRuntime = ManagedRuntime.ManagedRuntime<Client, never>

/**
 * Runs `effect` to its exit, which is what the run succeeds with: a failure is its caller's rejection, never an
 * unhandled error of the run's fiber (a `WorkerBusy` a caller catches is not logged).
 *
 * @internal
 */
export const exitOf = <A, E, R>(
  runtime: ManagedRuntime.ManagedRuntime<R, never>,
  effect: Effect.Effect<A, E, R>
): Promise<Exit.Exit<A, E>> => runtime.runPromiseExit(Effect.exit(effect)).then(Exit.flatten)

// Runs `effect` synchronously as far as it goes (a first use also builds the runtime in this step), so a
// subscription's request is out before this returns; whatever is left runs on and is awaited.
const subscribeNow = <A, E>(runtime: ClientRuntime, effect: Effect.Effect<A, E, Client>): Promise<Exit.Exit<A, E>> => {
  const exit = runtime.runSyncExit(effect)
  if (Exit.isFailure(exit) && Cause.isDie(exit.cause)) {
    const defect = Cause.squash(exit.cause)
    if (Runtime.isAsyncFiberException(defect)) {
      return runtime.runPromiseExit(Fiber.await(defect.fiber as Fiber.RuntimeFiber<A, E>)).then(Exit.flatten)
    }
  }
  return Promise.resolve(exit)
}

/** `events` as an async iterator over a subscription of the remote client. */
const eventsOf = (
  runtime: ClientRuntime,
  disposed: boolean,
  id: string,
  options: McpWorkers.EventsOptions | undefined
): AsyncIterableIterator<McpWorkers.ServerNotification> & AsyncDisposable => {
  // The subscription lives in a scope of its own, closed when the caller is done. It is made now, in this call
  // (its request goes out before anything the caller does next), not at the first `next()`.
  const scope = Effect.runSync(Scope.make())
  const subscribed = disposed
    ? Promise.reject(disposedError("the mcp-worker client was disposed"))
    : subscribeNow(
        runtime,
        Effect.flatMap(Client, (client) => Scope.extend(client.subscribe(id, options), scope))
      )
  subscribed.catch(() => {})
  // A refused subscription (an unknown worker, a bad capacity) is the first read's failure.
  const read = () =>
    subscribed.then((exit) =>
      Exit.isSuccess(exit)
        ? exitOf(runtime, exit.value)
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

/**
 * The Promise client over the socket client (`listen/client.ts`) in a runtime of its own.
 *
 * @internal
 */
export const makeConnected = (options: MakeOptions): PromiseClient => {
  const runtime = ManagedRuntime.make(
    Layer.scoped(
      Client,
      options?.connect === undefined
        ? Remote.make
        : // Loaded on first use, as NodeMcpWorkers.layerConnect loads it (C2).
          Effect.flatMap(
            Effect.promise(() => import("./listen/client.js")),
            (client) => client.make({ path: options.connect! })
          )
    )
  )
  let disposed = false

  const run = <A>(f: (client: Remote.RemoteService) => Effect.Effect<A, unknown>, signal?: AbortSignal): Promise<A> =>
    disposed
      ? Promise.reject(disposedError("the mcp-worker client was disposed"))
      : exitOf(runtime, Effect.flatMap(Client, f)).then((exit) =>
          Exit.isSuccess(exit) ? exit.value : Promise.reject(rejection(exit.cause, signal))
        )

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

  const events: PromiseClient["events"] = (id, options) => eventsOf(runtime, disposed, id, options)

  return {
    open: (config, options) => run((client) => client.open(config, openOptions(options))),
    ...requests,
    ...agentHostOf(abortable, requests, (client, id, page, signal) => client.listTools(id, { ...page, signal })),
    status: (id) => run((client) => client.status(id)),
    cancel: (id, requestId) => run((client) => client.cancel(id, requestId)),
    close: (id, options) => run((client) => client.close(id, { timeout: duration(options?.timeout) })),
    events,
    dispose,
    [Symbol.asyncDispose]: dispose
  }
}

/**
 * `openAll`, `closeAll`, `describe` and `tools` as Promises, over any `McpWorkers` a runner reaches (a remote client, a
 * host's own service): `run` runs one of its effects with the caller's signal.
 *
 * @internal
 */
export const agentHostOf = <S extends McpWorkers.McpWorkersService>(
  run: <A>(signal: AbortSignal | undefined, f: (service: S) => Effect.Effect<A, unknown>) => Promise<A>,
  requests: Requests,
  listTools: (
    service: S,
    id: string,
    page: Operations.ListOptions | undefined,
    signal: AbortSignal | undefined
  ) => Effect.Effect<ListToolsResult, unknown>
): Pick<PromiseClient, "openAll" | "closeAll" | "describe" | "tools"> => {
  // Every page of the worker's tools, each request with the caller's signal.
  const allTools = (id: string, options: RequestOptions | undefined) =>
    run(options?.signal, (service) =>
      AgentHost.listAllTools((worker, page) => listTools(service, worker, page, options?.signal), id, {
        timeout: duration(options?.timeout)
      })
    )
  return {
    openAll: (document, options) =>
      run(undefined, (service) =>
        service.openAll(document, {
          ...options,
          open: openOptions(options?.open),
          entries:
            options?.entries === undefined
              ? undefined
              : Object.fromEntries(Object.entries(options.entries).map(([name, o]) => [name, openOptions(o) ?? {}]))
        })
      ),
    closeAll: (workers, options) =>
      run(undefined, (service) => service.closeAll(workers, { timeout: duration(options?.timeout) })),
    describe: (id, options) =>
      allTools(id, options).then((tools) =>
        ToolDeclarations.render(tools, { name: options?.name, namespace: options?.namespace, title: options?.title })
      ),
    tools: (id, options) =>
      allTools(id, options).then((tools) =>
        ToolBinding.promise(requests.callTool as ToolBinding.PromiseCallTool<ToolCallOptions>, id, tools)
      )
  }
}

/** The Promise surfaces' `open` options as `McpWorkers`' (a budget in milliseconds, or a duration string). @internal */
export const openOptions = (options: OpenOptions | undefined): McpWorkers.OpenOptions | undefined =>
  options === undefined ? undefined : { ...options, timeout: duration(options.timeout) }

const settled = <A>(effect: Effect.Effect<A, unknown>, signal: AbortSignal | undefined): Promise<A> =>
  Effect.runPromiseExit(Effect.exit(effect))
    .then(Exit.flatten)
    .then((exit) => (Exit.isSuccess(exit) ? exit.value : Promise.reject(rejection(exit.cause, signal))))

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

/** @internal */
export const withClient = <A>(
  config: ServerConfigInput,
  f: (client: ScopedClient) => Promise<A>,
  options?: WithClientOptions
): Promise<A> =>
  settled(
    McpClientInternal.withClient(
      config,
      (client) => Effect.tryPromise({ try: () => f(scopedClient(client)), catch: (error) => error }),
      {
        timeout: duration(options?.timeout),
        requestTimeout: duration(options?.requestTimeout),
        closeTimeout: duration(options?.closeTimeout),
        maxResultBytes: options?.maxResultBytes,
        handlers: options?.handlers,
        tools: options?.tools
      }
    ),
    undefined
  )

/**
 * `open`'s checks for the lean client, in the calling thread: the normalized config and the checked options, or the
 * `InvalidInput` naming what is wrong.
 *
 * @internal
 */
export const prepareOpen = (config: unknown, options: OpenOptions | undefined): Promise<OpenRequest> =>
  Either.match(openRequest(config, openOptions(options)), {
    onLeft: (error) => Promise.reject(error),
    onRight: (request) => Promise.resolve(request)
  })

type OpenAllError = OpenFailed | HostUnavailable
type CloseAllError = UnknownWorker | InvalidInput | CloseFailed | HostUnavailable

// The lean client's `open` and `close` as the surface `OpenAll` runs: their rejections are the entries' failures.
const surfaceOf = (
  client: Pick<PromiseClient, "open" | "close">
): OpenAll.Surface<OpenOptions, OpenAllError, CloseOptions, CloseAllError> => ({
  open: (config, options) =>
    // The host's `open` answers a worker id.
    Effect.tryPromise({
      try: () => client.open(config, options) as Promise<WorkerId>,
      catch: (error) => error as OpenAllError
    }),
  close: (id, options) =>
    Effect.tryPromise({ try: () => client.close(id, options), catch: (error) => error as CloseAllError })
})

/**
 * `openAll` over a lean client's `open`: references are filled in from this thread's environment unless the options
 * name one.
 *
 * @internal
 */
export const openAll = (
  client: Pick<PromiseClient, "open" | "close">,
  document: McpConfig.Document,
  options: OpenAllOptions | undefined
): Promise<OpenAll.OpenAllResult<OpenAllError>> =>
  Effect.runPromise(
    OpenAll.openAll(surfaceOf(client), document, {
      ...options,
      environment: options?.environment ?? process.env
    })
  )

/** `closeAll` over a lean client's `close`. @internal */
export const closeAll = (
  client: Pick<PromiseClient, "open" | "close">,
  workers: Readonly<Record<string, OpenAll.OpenResult<unknown> | string>>,
  options: CloseOptions | undefined
): Promise<Readonly<Record<string, OpenAll.CloseResult<CloseAllError>>>> =>
  Effect.runPromise(OpenAll.closeAll(surfaceOf(client), workers, options))
