/**
 * A worker's tools as the methods of one object (`tools.get_sum({ a, b })`), over any surface's `callTool`: each
 * method is `callTool(id, realName, args, options)` and nothing else, so it fails with the same errors, answers the
 * server's raw result, and takes the same options (`timeout`, `onProgress`, `saveTo`, `onTooLarge`, and a surface's
 * own, such as a Promise client's `signal`). Method names are those of `ToolDeclarations` (`methodNames`), so
 * declarations rendered for the same tools describe the object exactly.
 *
 * Only the id and the tool names are held: the object works wherever its `callTool` does (any thread of the
 * process the id reaches), and holds no connection of its own.
 *
 * @since 0.1.0
 */
import type { CallToolResult } from "@modelcontextprotocol/client"
import type * as Effect from "effect/Effect"
import type { JsonObject } from "./JsonValue.js"
import type { RequestError } from "./McpWorkerError.js"
import type { CallToolOptions, SavedResult } from "./Operations.js"
import { methodNames } from "./ToolDeclarations.js"

/**
 * What a binding is made for: a `tools/list` result, its tools (several pages joined), or tool names: only the
 * names are read.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolList =
  { readonly tools: ReadonlyArray<{ readonly name: string }> } | ReadonlyArray<{ readonly name: string } | string>

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
export type Binding<Method> = { readonly [method: string]: Method }

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
): Binding<EffectMethod<Extra>> => bind(callTool, id, tools) as Binding<EffectMethod<Extra>>

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
): Binding<PromiseMethod<Options>> => bind(callTool, id, tools) as Binding<PromiseMethod<Options>>

/**
 * The tool names of a tool list, in order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const namesOf = (tools: ToolList): ReadonlyArray<string> => {
  const list: unknown = Array.isArray(tools) ? tools : (tools as { tools?: unknown }).tools
  if (!Array.isArray(list)) return []
  return list.flatMap((tool) =>
    typeof tool === "string"
      ? [tool]
      : typeof tool === "object" && tool !== null && typeof (tool as { name?: unknown }).name === "string"
        ? [(tool as { name: string }).name]
        : []
  )
}

// internal

// A frozen object without a prototype: its keys are the methods and nothing else (no `toString` to shadow a tool).
const bind = <R>(
  callTool: (id: string, name: string, args?: JsonObject, options?: any) => R,
  id: string,
  tools: ToolList
): Binding<(args?: JsonObject, options?: unknown) => R> => {
  const binding = Object.create(null) as Record<string, (args?: JsonObject, options?: unknown) => R>
  for (const [method, name] of methodNames(namesOf(tools))) {
    const call = (args?: JsonObject, options?: unknown): R => callTool(id, name, args, options)
    Object.defineProperty(binding, method, { value: call, enumerable: true })
  }
  return Object.freeze(binding)
}
