/** The Effect side of the Promise surfaces, loaded only when one of them needs it. @internal */
import * as Client from "@mcp-worker/caller/Client"
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import type { ListToolsResult } from "@modelcontextprotocol/client"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import * as ToolBinding from "@mcp-worker/core/agentHost/ToolBinding"
import * as ToolDeclarations from "@mcp-worker/core/agentHost/ToolDeclarations"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import type * as McpClient from "../McpClient.js"
import type * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import * as Either from "effect/Either"
import type {
  CloseOptions,
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
import * as McpClientInternal from "./mcpClient/clientObject.js"
import { openRequest, type OpenRequest } from "./thread/openRequest.js"

// Unchecked here: the call checks it like every other input.
const duration = (timeout: Timeout | undefined) => timeout as Duration.DurationInput | undefined

// An interruption is a `dispose`, or the call's signal aborted before its request was posted.
const rejection = (cause: Cause.Cause<unknown>, signal: AbortSignal | undefined): unknown =>
  Option.getOrElse(Cause.failureOption(cause), () =>
    !Cause.isInterruptedOnly(cause)
      ? Cause.squash(cause)
      : signal?.aborted === true
        ? signal.reason
        : Client.disposedError("the mcp-worker client was disposed while the call was in flight")
  )

/** The run succeeds with the exit, so a `WorkerBusy` a caller catches is not logged as unhandled. @internal */
export const exitOf = <A, E, R>(
  runtime: ManagedRuntime.ManagedRuntime<R, never>,
  effect: Effect.Effect<A, E, R>
): Promise<Exit.Exit<A, E>> => runtime.runPromiseExit(Effect.exit(effect)).then(Exit.flatten)

/** @internal */
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

/** @internal */
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
        // Aborted later, the request is cancelled at the server.
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

/** C18: checked in the calling thread, with its environment. @internal */
export const prepareOpen = (config: unknown, options: OpenOptions | undefined): Promise<OpenRequest> =>
  Either.match(openRequest(config, openOptions(options)), {
    onLeft: (error) => Promise.reject(error),
    onRight: (request) => Promise.resolve(request)
  })

// The failures `PromiseClient` declares for one entry.
type OpenAllError = Awaited<ReturnType<PromiseClient["openAll"]>> extends OpenAll.OpenAllResult<infer E> ? E : never
type CloseAllError =
  Awaited<ReturnType<PromiseClient["closeAll"]>>[string] extends OpenAll.CloseResult<infer E> ? E : never

// Their rejections are the entries' failures.
const surfaceOf = (
  client: Pick<PromiseClient, "open" | "close">
): OpenAll.Surface<OpenOptions, OpenAllError, CloseOptions, CloseAllError> => ({
  open: (config, options) =>
    Effect.tryPromise({
      try: () => client.open(config, options) as Promise<WorkerId>,
      catch: (error) => error as OpenAllError
    }),
  close: (id, options) =>
    Effect.tryPromise({ try: () => client.close(id, options), catch: (error) => error as CloseAllError })
})

/** References are filled in from this thread's environment, as envFrom is. @internal */
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

/** @internal */
export const closeAll = (
  client: Pick<PromiseClient, "open" | "close">,
  workers: Readonly<Record<string, OpenAll.OpenResult<unknown> | string>>,
  options: CloseOptions | undefined
): Promise<Readonly<Record<string, OpenAll.CloseResult<CloseAllError>>>> =>
  Effect.runPromise(OpenAll.closeAll(surfaceOf(client), workers, options))
