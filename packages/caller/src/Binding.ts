/**
 * A worker's tools as the methods of one object (`tools.get_sum({ a, b })`), over any surface's `callTool`: each
 * method is `callTool(id, realName, args, options)` and nothing else, so it fails with the same errors, answers the
 * server's raw result and takes the same options. Method names follow `methodNames`, which the rendered declarations
 * of the same tools use too (`@mcp-worker/core/agentHost/ToolDeclarations`), so the declarations describe the object exactly.
 *
 * Only the id and the tool names are held: the object works wherever its `callTool` does, and holds no connection.
 *
 * @since 0.1.0
 */

/**
 * What a binding is made for: a `tools/list` result, its tools (several pages joined), or tool names: only the names
 * are read.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolList =
  { readonly tools: ReadonlyArray<{ readonly name: string }> } | ReadonlyArray<{ readonly name: string } | string>

/**
 * The tools of a worker, by method name.
 *
 * @since 0.1.0
 * @category models
 */
export type Binding<Method> = { readonly [method: string]: Method }

/**
 * The method name of each tool, in list order: the tool's own name when it is an identifier, else its characters
 * outside `A-Za-z0-9_$` as `_` (and `_` before a leading digit); a name already taken gets `_2`, `_3`…; `then` and
 * `__proto__` get a trailing `_`, so a binding object is never a thenable nor loses a method to its prototype.
 *
 * @since 0.1.0
 * @category utils
 */
export const methodNames = (tools: ReadonlyArray<string>): ReadonlyArray<readonly [method: string, tool: string]> => {
  const taken = new Set<string>()
  const safe = (name: string): string | undefined =>
    identifier.test(name) && !reserved.has(name) && !taken.has(name) ? name : undefined
  const first = tools.map((name) => {
    const method = safe(name)
    if (method !== undefined) taken.add(method)
    return method
  })
  return tools.map((name, i) => {
    const own = first[i]
    if (own !== undefined) return [own, name] as const
    let base = name.replace(/[^A-Za-z0-9_$]/g, "_")
    if (base === "" || /^[0-9]/.test(base)) base = `_${base}`
    if (reserved.has(base)) base = `${base}_`
    let method = base
    for (let n = 2; taken.has(method); n++) method = `${base}_${n}`
    taken.add(method)
    return [method, name] as const
  })
}

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

/**
 * The tools of worker `id` as methods over `callTool`: a frozen object without a prototype, whose keys are the
 * methods and nothing else (no `toString` to shadow a tool).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bind = <Args, Options, R>(
  callTool: (id: string, name: string, args?: Args, options?: Options) => R,
  id: string,
  tools: ToolList
): Binding<(args?: Args, options?: Options) => R> => {
  const binding = Object.create(null) as Record<string, (args?: Args, options?: Options) => R>
  for (const [method, name] of methodNames(namesOf(tools))) {
    const call = (args?: Args, options?: Options): R => callTool(id, name, args, options)
    Object.defineProperty(binding, method, { value: call, enumerable: true })
  }
  return Object.freeze(binding)
}

// internal

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

const reserved: ReadonlySet<string> = new Set(["then", "__proto__"])
