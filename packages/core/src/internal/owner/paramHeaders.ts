/**
 * SEP-2243's tool parameters in headers (2026-07-28 Streamable HTTP, C62): a tool's `inputSchema` may mark
 * properties with `x-mcp-header`, whose values the client mirrors into `Mcp-Param-{Name}` headers of each
 * `tools/call`; a definition whose declarations break the rules is excluded from `tools/list`. The client SDK has
 * this only inside `callTool`/`listTools`, which the owner does not use (C25); these are the same rules, held per
 * connection from what the server listed, and a test compares them with the SDK's own scan and encoding.
 */
import * as Either from "effect/Either"

/** One `x-mcp-header` declaration: where its value sits in the arguments, and the header it goes to. @internal */
export interface Declaration {
  readonly path: ReadonlyArray<string>
  readonly header: string
}

/** What a tool's `inputSchema` declares: its declarations, or the first rule it breaks. @internal */
export type Scan =
  | { readonly valid: true; readonly declarations: ReadonlyArray<Declaration> }
  | { readonly valid: false; readonly reason: string }

const key = "x-mcp-header"

// RFC 9110 §5.1 `token`: no space, control character or delimiter, and not empty.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// `number` is not among them: a header cannot carry a float without loss, so the revision admits only these.
const primitive = new Set(["string", "integer", "boolean"])

// Keywords whose subschemas no `properties` chain reaches statically: a declaration under any of them is invalid.
const unreachable = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions"
] as const

// Of those, the ones whose value maps names to subschemas.
const named = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"])

const where = (path: ReadonlyArray<string>): string => (path.length === 0 ? "<root>" : path.join("."))

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The declarations of one `inputSchema`, walking `properties` at any depth. Every rule is checked: a non-empty
 * token, on a property reached only through `properties`, of a permitted type, unique without regard to case.
 *
 * @internal
 */
export const scan = (inputSchema: unknown): Scan => {
  const declarations: Array<Declaration> = []
  const seen = new Map<string, string>()
  // A `number` declaration is reported even when a later rule breaks too: it is the reason servers hear most.
  let numberFault: string | undefined
  const visit = (node: unknown, path: ReadonlyArray<string>, reachable: boolean): string | undefined => {
    if (!isRecord(node)) return undefined
    if (key in node) {
      if (!reachable || path.length === 0) {
        return `${where(path)}: x-mcp-header is only permitted on properties reached through 'properties' alone`
      }
      const header = node[key]
      if (typeof header !== "string" || header.length === 0) return `${where(path)}: x-mcp-header must be a string`
      if (!token.test(header)) return `${where(path)}: x-mcp-header '${header}' is not an RFC 9110 token`
      const type = typeof node.type === "string" ? node.type : undefined
      if (type === undefined || !primitive.has(type)) {
        const fault = `${where(path)}: x-mcp-header is only permitted on string, integer or boolean properties`
        if (type !== "number") return fault
        numberFault ??= fault
      }
      const prior = seen.get(header.toLowerCase())
      if (prior !== undefined) return `x-mcp-header '${header}' is declared twice (also as '${prior}')`
      seen.set(header.toLowerCase(), header)
      declarations.push({ path, header })
    }
    if (isRecord(node.properties)) {
      for (const [name, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, name], reachable)
        if (fault !== undefined) return fault
      }
    }
    for (const keyword of unreachable) {
      const sub = node[keyword]
      if (sub === undefined) continue
      const branches = Array.isArray(sub) ? sub : isRecord(sub) && named.has(keyword) ? Object.values(sub) : [sub]
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false)
        if (fault !== undefined) return fault
      }
    }
    return undefined
  }
  const fault = visit(inputSchema, [], true)
  if (fault !== undefined || numberFault !== undefined) return { valid: false, reason: numberFault ?? fault! }
  return { valid: true, declarations }
}

const sentinel = { prefix: "=?base64?", suffix: "?=" }

// A value a header cannot carry as is: empty, padded (field parsing strips it), outside visible ASCII and tab, or
// looking like the Base64 form already.
const needsBase64 = (value: string): boolean => {
  if (value.length === 0 || value !== value.trim()) return true
  if (value.startsWith(sentinel.prefix) && value.endsWith(sentinel.suffix)) return true
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code !== 9 && (code < 32 || code > 126)) return true
  }
  return false
}

/** A value as its header carries it: plain when it is safe, else `=?base64?{UTF-8 in Base64}?=`. @internal */
export const encode = (value: string): string =>
  needsBase64(value) ? `${sentinel.prefix}${Buffer.from(value, "utf8").toString("base64")}${sentinel.suffix}` : value

// Strings as they are, booleans in lower case, numbers in decimal; nothing for what has no exact text.
const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value)
}

const at = (root: unknown, path: ReadonlyArray<string>): unknown => {
  let node = root
  for (const name of path) {
    if (!isRecord(node)) return undefined
    node = node[name]
  }
  return node
}

/**
 * The `Mcp-Param-*` headers of one call: a value absent or `null` sends no header, and so does one that is not a
 * primitive (the server, which checks its headers, tells the caller).
 *
 * @internal
 */
export const headersFor = (
  declarations: ReadonlyArray<Declaration>,
  args: unknown
): Record<string, string> | undefined => {
  let headers: Record<string, string> | undefined
  for (const declaration of declarations) {
    const text = textOf(at(args, declaration.path))
    if (text === undefined) continue
    headers ??= {}
    headers[`Mcp-Param-${declaration.header}`] = encode(text)
  }
  return headers
}

/**
 * What a connection knows of its tools' declarations, from the `tools/list` results it carried since the last
 * `list_changed`: each valid tool with declarations, and the names of those excluded.
 *
 * @internal
 */
export interface Known {
  readonly declared: Map<string, ReadonlyArray<Declaration>>
  readonly excluded: Set<string>
}

/** @internal */
export const makeKnown = (): Known => ({ declared: new Map(), excluded: new Set() })

/** Forgets every tool's declarations: the tools changed, and are known again once listed. @internal */
export const forget = (known: Known): void => {
  known.declared.clear()
  known.excluded.clear()
}

/**
 * A `tools/list` result without the tools whose declarations are invalid, and what it taught `known`. `undefined`
 * when every tool is valid: the server's result stands as it came.
 *
 * @internal
 */
export const excludeInvalid = (known: Known, result: unknown): unknown => {
  if (!isRecord(result) || !Array.isArray(result.tools)) return undefined
  const tools: ReadonlyArray<unknown> = result.tools
  let kept: Array<unknown> | undefined
  tools.forEach((tool, index) => {
    const name = isRecord(tool) && typeof tool.name === "string" ? tool.name : undefined
    const scanned = isRecord(tool) ? scan(tool.inputSchema) : ({ valid: true, declarations: [] } as const)
    if (name !== undefined) {
      known.declared.delete(name)
      known.excluded.delete(name)
      if (!scanned.valid) known.excluded.add(name)
      else if (scanned.declarations.length > 0) known.declared.set(name, scanned.declarations)
    }
    if (!scanned.valid) kept ??= tools.slice(0, index)
    else kept?.push(tool)
  })
  return kept === undefined ? undefined : { ...result, tools: kept }
}

/**
 * A `tools/call`'s headers on a connection that carries them: `Left` when the tool was excluded from the list (its
 * definition is invalid, so it is never called), else its `Mcp-Param-*` headers; none for a tool not listed since
 * the tools last changed, which is sent as the revision says then, without them.
 *
 * @internal
 */
export const ofCall = (
  known: Known,
  params: Record<string, unknown>
): Either.Either<Record<string, string> | undefined, "excluded"> => {
  const name = params.name
  if (typeof name !== "string") return Either.right(undefined)
  if (known.excluded.has(name)) return Either.left("excluded")
  const declarations = known.declared.get(name)
  return Either.right(declarations === undefined ? undefined : headersFor(declarations, params.arguments))
}
