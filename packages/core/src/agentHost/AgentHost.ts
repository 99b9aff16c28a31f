/**
 * What an agent host asks of `McpWorkers` beyond one server: a whole config document opened and closed at once
 * (`openAll`, `closeAll`), the declarations of a worker's tools (`describe`), and its tools as methods (`tools`).
 * Each is a thin function over the surface's own operations (`open`, `close`, `listTools`, `callTool`), so every
 * surface that has those has these too, with the same errors and the same delivery truth.
 *
 * @since 0.1.0
 */
import * as Client from "@mcp-worker/caller/Client"
import type * as Surface from "@mcp-worker/caller/Surface"
import type { Tool } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import type { CloseFailed, HostUnavailable, InvalidInput, OpenFailed, UnknownWorker } from "../McpWorkerError.js"
import type * as McpWorkers from "../McpWorkers.js"
import type { EffectRuntime } from "../internal/effectRuntime.js"
import * as OpenAll from "./OpenAll.js"
import type * as Operations from "../Operations.js"
import * as ToolBinding from "./ToolBinding.js"
import * as ToolDeclarations from "./ToolDeclarations.js"

/**
 * Options of `describe`: those of the rendering, and of each `listTools` page.
 *
 * @since 0.1.0
 * @category models
 */
export interface DescribeOptions extends ToolDeclarations.Options, Operations.RequestOptions {}

/**
 * The agent-host operations of a surface.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentHost extends Surface.Methods<Surface.AgentHost<McpWorkers.SurfaceTypes>, EffectRuntime> {}

/**
 * The operations the agent-host operations are made of.
 *
 * @since 0.1.0
 * @category models
 */
export type Base = Omit<McpWorkers.McpWorkersService, keyof AgentHost>

/**
 * Options of `extend`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExtendOptions {
  /** The caller's environment for `openAll`'s references when its options name none (Node: `process.env`). */
  readonly environment?: (() => Readonly<Record<string, string | undefined>>) | undefined
}

/**
 * A surface with the agent-host operations added over its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const extend = <S extends Base>(base: S, options?: ExtendOptions): S & AgentHost => {
  const surface: OpenAll.Surface<
    McpWorkers.OpenOptions,
    OpenFailed | HostUnavailable | InvalidInput,
    McpWorkers.CloseOptions,
    UnknownWorker | InvalidInput | CloseFailed | HostUnavailable
  > = { open: base.open, close: base.close }
  const agentHost: AgentHost = {
    openAll: (document, openOptions) =>
      OpenAll.openAll(
        surface,
        document,
        openOptions?.environment === undefined && options?.environment !== undefined
          ? { ...openOptions, environment: options.environment() }
          : openOptions
      ),
    closeAll: (workers, closeOptions) => OpenAll.closeAll(surface, workers, closeOptions),
    describe: (id, describeOptions) =>
      Effect.map(listAllTools(base.listTools, id, describeOptions), (tools) =>
        ToolDeclarations.render(tools, describeOptions)
      ).pipe(Effect.withSpan("McpWorkers.describe", { attributes: { workerId: id } })),
    tools: (id, requestOptions) =>
      Effect.map(listAllTools(base.listTools, id, requestOptions), (tools) =>
        ToolBinding.effect(base.callTool, id, tools)
      )
  }
  return Object.assign({}, base, agentHost)
}

/**
 * The most pages `listAllTools` reads: a server whose cursors never end is not followed forever.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPages: number = Client.maxPages

/**
 * Every tool of a worker: `listTools` page after page while the server gives a new `nextCursor` (at most
 * `maxPages`; a cursor seen before ends the list).
 *
 * @since 0.1.0
 * @category utils
 */
export const listAllTools = <E>(
  listTools: (
    id: string,
    options?: Operations.ListOptions
  ) => Effect.Effect<{ readonly tools: ReadonlyArray<Tool>; readonly nextCursor?: string | undefined }, E>,
  id: string,
  options?: Operations.RequestOptions
): Effect.Effect<ReadonlyArray<Tool>, E> =>
  Effect.gen(function* () {
    const tools: Array<Tool> = []
    const seen = new Set<string>()
    let cursor: string | undefined = undefined
    for (let page = 0; page < maxPages; page++) {
      const result: { readonly tools: ReadonlyArray<Tool>; readonly nextCursor?: string | undefined } =
        yield* listTools(id, {
          timeout: options?.timeout,
          onProgress: options?.onProgress,
          ...(cursor === undefined ? {} : { cursor })
        })
      tools.push(...result.tools)
      cursor = Client.nextPage(seen, result.nextCursor)
      if (cursor === undefined) break
    }
    return tools
  })
