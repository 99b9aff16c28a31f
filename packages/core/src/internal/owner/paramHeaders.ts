/** C62, C25: the SDK has these only inside `callTool`/`listTools`; a test compares the rules with its own. */
import * as Either from "effect/Either"

/** @internal */
export interface Declaration {
  readonly path: ReadonlyArray<string>
  readonly header: string
}

/** @internal */
export type Scan =
  | { readonly valid: true; readonly declarations: ReadonlyArray<Declaration> }
  | { readonly valid: false; readonly reason: string }

const key = "x-mcp-header"

// RFC 9110 §5.1 `token`.
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// No `number`: a header cannot carry a float without loss.
const primitive = new Set(["string", "integer", "boolean"])

// No `properties` chain reaches these statically.
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

const named = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"])

const where = (path: ReadonlyArray<string>): string => (path.length === 0 ? "<root>" : path.join("."))

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** @internal */
export const scan = (inputSchema: unknown): Scan => {
  const declarations: Array<Declaration> = []
  const seen = new Map<string, string>()
  // `number` is reported even when a later rule breaks: servers hear it most.
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

// Field parsing strips padding, and a Base64-looking value would be decoded.
const needsBase64 = (value: string): boolean => {
  if (value.length === 0 || value !== value.trim()) return true
  if (value.startsWith(sentinel.prefix) && value.endsWith(sentinel.suffix)) return true
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code !== 9 && (code < 32 || code > 126)) return true
  }
  return false
}

/** @internal */
export const encode = (value: string): string =>
  needsBase64(value) ? `${sentinel.prefix}${Buffer.from(value, "utf8").toString("base64")}${sentinel.suffix}` : value

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

/** The server checks its headers, so a non-primitive is left to it. @internal */
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

/** @internal */
export interface Known {
  readonly declared: Map<string, ReadonlyArray<Declaration>>
  readonly excluded: Set<string>
}

/** @internal */
export const makeKnown = (): Known => ({ declared: new Map(), excluded: new Set() })

/** @internal */
export const forget = (known: Known): void => {
  known.declared.clear()
  known.excluded.clear()
}

/** `undefined`: the server's result stands. @internal */
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

/** C62 @internal */
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
