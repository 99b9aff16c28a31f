/**
 * A worker's tools as the methods of one object (`tools.get_sum({ a, b })`), over any surface's `callTool`: each
 * method is `callTool(id, realName, args, options)` and nothing else, so it fails with the same errors, answers the
 * server's raw result, and takes the same options (`timeout`, `onProgress`, `saveTo`, `onTooLarge`, and a surface's
 * own, such as a Promise client's `signal`). The object is `@mcp-worker/caller/Binding`'s, whose `methodNames`
 * `ToolDeclarations` renders with too, so declarations rendered for the same tools describe the object exactly.
 *
 * Only the id and the tool names are held: the object works wherever its `callTool` does (any thread of the
 * process the id reaches), and holds no connection of its own.
 *
 * @since 0.1.0
 */
import * as CallerBinding from "@mcp-worker/caller/Binding"
import type { CallToolResult } from "@modelcontextprotocol/client"
import type * as Effect from "effect/Effect"
import type { JsonObject } from "../JsonValue.js"
import type { RequestError } from "../McpWorkerError.js"
import type { CallToolOptions, SavedResult } from "../Operations.js"

/**
 * What a binding is made for: a `tools/list` result, its tools (several pages joined), or tool names.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolList = CallerBinding.ToolList

/**
 * One tool as an Effect method.
 *
 * @since 0.1.0
 * @category models
 */
export interface EffectMethod<Extra = {}> {
  (
    args: JsonObject | undefined,
    options: CallToolOptions & Extra & { readonly saveTo: string }
  ): Effect.Effect<SavedResult, RequestError>
  (args?: JsonObject, options?: CallToolOptions & Extra): Effect.Effect<CallToolResult, RequestError>
}

/**
 * One tool as a Promise method (rejecting with the same tagged errors).
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseMethod<Options> {
  (args: JsonObject | undefined, options: Options & { readonly saveTo: string }): Promise<SavedResult>
  (args?: JsonObject, options?: Options): Promise<CallToolResult>
}

/**
 * The tools of a worker, by method name.
 *
 * @since 0.1.0
 * @category models
 */
export type Binding<Method> = CallerBinding.Binding<Method>

/**
 * The `callTool` of an Effect surface (`McpWorkers`, `McpClient`).
 *
 * @since 0.1.0
 * @category models
 */
export type EffectCallTool<Extra = {}> = (
  id: string,
  name: string,
  args?: JsonObject,
  options?: CallToolOptions & Extra
) => Effect.Effect<CallToolResult | SavedResult, RequestError>

/**
 * The `callTool` of a Promise surface.
 *
 * @since 0.1.0
 * @category models
 */
export type PromiseCallTool<Options> = (
  id: string,
  name: string,
  args?: JsonObject,
  options?: Options
) => Promise<CallToolResult | SavedResult>

/**
 * The tools of worker `id` as Effect methods over `callTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const effect = <Extra = {}>(
  callTool: EffectCallTool<Extra>,
  id: string,
  tools: ToolList
): Binding<EffectMethod<Extra>> => CallerBinding.bind(callTool, id, tools) as Binding<EffectMethod<Extra>>

/**
 * The tools of worker `id` as Promise methods over a Promise client's `callTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const promise = <Options>(
  callTool: PromiseCallTool<Options>,
  id: string,
  tools: ToolList
): Binding<PromiseMethod<Options>> => CallerBinding.bind(callTool, id, tools) as Binding<PromiseMethod<Options>>

/**
 * The tool names of a tool list, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const namesOf: (tools: ToolList) => ReadonlyArray<string> = CallerBinding.namesOf
