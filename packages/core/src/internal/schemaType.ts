/**
 * JSON Schema to TypeScript type text; what TypeScript cannot say becomes `unknown` with a comment, so the output
 * always compiles. A `$ref` is named only inside an object or array, where an alias may refer to itself.
 */

/** Untrusted data. @internal */
export type Schema = unknown

/** @internal */
export interface Named {
  readonly name: string
  text: string
}

/** @internal */
export interface Document {
  readonly root: Schema
  readonly named: Map<string, Named>
  readonly prefix: string
  readonly allocate: (base: string) => string
  readonly emitted: Array<Named>
  /** Expanding references in place must not grow without bound. */
  readonly budget: { left: number }
}

const maxDepth = 24

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** @internal */
export const commentSafe = (text: string): string => text.replaceAll("*/", "*\\/").replaceAll("/*", "/\\*")

/** @internal */
export const propertyName = (name: string): string => (identifier.test(name) ? name : JSON.stringify(name))

const unknownBecause = (why: string): string => `unknown /* ${commentSafe(why)} */`

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const own = (value: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(value, key) ? value[key] : undefined

const literal = (value: unknown, depth: number): string => {
  if (value === null) return "null"
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "boolean") return String(value)
  if (typeof value === "number") {
    return Number.isFinite(value) ? String(value === 0 ? 0 : value) : unknownBecause("a number TypeScript cannot write")
  }
  if (depth > maxDepth) return unknownBecause("a constant nested too deeply")
  if (Array.isArray(value)) return `readonly [${value.map((item) => literal(item, depth + 1)).join(", ")}]`
  if (isObject(value)) {
    const members = Object.keys(value).map((key) => `readonly ${propertyName(key)}: ${literal(value[key], depth + 1)}`)
    return members.length === 0 ? "{}" : `{ ${members.join("; ")} }`
  }
  return unknownBecause("a constant that is not JSON")
}

const union = (types: ReadonlyArray<string>): string => {
  const unique = [...new Set(types.flatMap(members))]
  if (unique.length === 0) return "never"
  if (unique.includes("unknown")) return "unknown"
  return unique.length === 1 ? unique[0] : unique.map(group).join(" | ")
}

const intersection = (types: ReadonlyArray<string>): string => {
  const useful = [...new Set(types)].filter((type) => type !== "unknown")
  if (useful.length === 0) return "unknown"
  return useful.length === 1 ? useful[0] : useful.map(group).join(" & ")
}

// A union inside an intersection, or a `readonly` tuple, must be grouped.
const group = (type: string): string => (isOneTerm(type) ? type : `(${type})`)

const isOneTerm = (type: string): boolean => !type.startsWith("readonly ") && topLevel(type).length === 0

const members = (type: string): ReadonlyArray<string> => {
  const operators = topLevel(type)
  if (operators.length === 0 || operators.some(([operator]) => operator === "&")) return [type]
  const out: Array<string> = []
  let from = 0
  for (const [, at] of operators) {
    out.push(type.slice(from, at).trim())
    from = at + 1
  }
  out.push(type.slice(from).trim())
  return out
}

const topLevel = (type: string): ReadonlyArray<readonly [string, number]> => {
  const found: Array<readonly [string, number]> = []
  let depth = 0
  for (let i = 0; i < type.length; i++) {
    const c = type[i]
    if (c === '"') {
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === "\\") i++
    } else if (c === "/" && type[i + 1] === "*") {
      const end = type.indexOf("*/", i + 2)
      i = end < 0 ? type.length : end + 1
    } else if (c === "(" || c === "[" || c === "{" || c === "<") {
      depth++
    } else if (c === ")" || c === "]" || c === "}" || c === ">") {
      depth--
    } else if (depth === 0 && (c === "|" || c === "&")) {
      found.push([c, i])
    }
  }
  return found
}

const decodePointer = (token: string): string => token.replaceAll("~1", "/").replaceAll("~0", "~")

const resolvePointer = (root: Schema, ref: string): { readonly schema: Schema } | { readonly why: string } => {
  if (!ref.startsWith("#")) return { why: "a $ref outside this schema" }
  let fragment: string
  try {
    fragment = decodeURIComponent(ref.slice(1))
  } catch {
    return { why: "a $ref that is not a valid pointer" }
  }
  if (fragment !== "" && !fragment.startsWith("/")) return { why: "a $ref to an anchor" }
  let at: unknown = root
  for (const token of fragment === "" ? [] : fragment.slice(1).split("/").map(decodePointer)) {
    if (Array.isArray(at) && /^(0|[1-9][0-9]*)$/.test(token) && Number(token) < at.length) at = at[Number(token)]
    else if (isObject(at) && Object.hasOwn(at, token)) at = at[token]
    else return { why: "a $ref to nothing in this schema" }
  }
  return { schema: at }
}

const nameOf = (document: Document, ref: string): string => {
  const tokens = ref
    .slice(1)
    .split("/")
    .filter((token) => token.length > 0)
  const last = tokens.length === 0 ? "Root" : decodePointer(tokens[tokens.length - 1])
  return document.allocate(document.prefix + pascal(last))
}

/** @internal */
export const pascal = (text: string): string => {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word.length > 0)
  const joined = words.map((word) => word[0].toUpperCase() + word.slice(1)).join("")
  return joined === "" ? "T" : /^[0-9]/.test(joined) ? `T${joined}` : joined
}

interface Walk {
  readonly document: Document
  readonly depth: number
  /** Catches a reference back to itself. */
  readonly expanding: ReadonlySet<string>
  readonly guarded: boolean
  /** A tuple's rest resolves at once; only an object's members are deferred. */
  readonly eager: boolean
  readonly indent: string
}

type Position = "same" | "object" | "array" | "rest"

const deeper = (walk: Walk, position: Position, indent: boolean): Walk => ({
  ...walk,
  depth: walk.depth + 1,
  guarded: position === "object" || (position === "array" && !walk.eager) || (position === "same" && walk.guarded),
  eager: position === "rest" || (walk.eager && position !== "object"),
  indent: indent ? walk.indent + "  " : walk.indent
})

const reference = (ref: string, walk: Walk): string => {
  const target = resolvePointer(walk.document.root, ref)
  if ("why" in target) return unknownBecause(target.why)
  if (!walk.guarded) {
    if (walk.expanding.has(ref)) return unknownBecause("a $ref that refers to itself with no object or array between")
    return typeOf(target.schema, { ...walk, depth: walk.depth + 1, expanding: new Set([...walk.expanding, ref]) })
  }
  const existing = walk.document.named.get(ref)
  if (existing !== undefined) return existing.name
  const named: Named = { name: nameOf(walk.document, ref), text: "unknown" }
  walk.document.named.set(ref, named)
  named.text = typeOf(target.schema, {
    document: walk.document,
    depth: 0,
    expanding: new Set([ref]),
    guarded: false,
    eager: false,
    indent: ""
  })
  walk.document.emitted.push(named)
  return named.name
}

const typeKeywords = [
  "type",
  "properties",
  "additionalProperties",
  "patternProperties",
  "required",
  "items",
  "prefixItems",
  "enum",
  "const"
]

/** @internal */
export const typeOf = (schema: Schema, walk: Walk): string => {
  if (schema === true) return "unknown"
  if (schema === false) return "never"
  if (!isObject(schema)) return unknownBecause("a schema that is not an object")
  if (walk.depth > maxDepth) return unknownBecause("a schema nested too deeply")
  if (--walk.document.budget.left < 0) return unknownBecause("a schema too large to render")
  const parts: Array<string> = []
  const ref = own(schema, "$ref")
  if (typeof ref === "string") parts.push(reference(ref, walk))
  else if (ref !== undefined) parts.push(unknownBecause("a $ref that is not a string"))
  if (typeKeywords.some((key) => Object.hasOwn(schema, key)) || parts.length === 0) parts.push(base(schema, walk))
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const members = own(schema, key)
    if (members === undefined) continue
    if (!Array.isArray(members)) {
      parts.push(unknownBecause(`${key} that is not an array`))
      continue
    }
    const types = members.map((member) => typeOf(member, deeper(walk, "same", false)))
    parts.push(key === "allOf" ? intersection(types) : union(types))
  }
  const type = intersection(parts)
  return own(schema, "nullable") === true ? union([type, "null"]) : type
}

/** Everything but `$ref` and the combinators. */
const base = (schema: Record<string, unknown>, walk: Walk): string => {
  if (Object.hasOwn(schema, "const")) return literal(schema.const, 0)
  const values = own(schema, "enum")
  if (values !== undefined) {
    return Array.isArray(values)
      ? union(values.map((value) => literal(value, 0)))
      : unknownBecause("an enum that is not an array")
  }
  const type = own(schema, "type")
  if (Array.isArray(type)) return union(type.map((name) => ofType(name, schema, walk)))
  if (type !== undefined) return ofType(type, schema, walk)
  if (
    ["properties", "additionalProperties", "patternProperties", "required"].some((key) => Object.hasOwn(schema, key))
  ) {
    return objectType(schema, walk)
  }
  if (Object.hasOwn(schema, "items") || Object.hasOwn(schema, "prefixItems")) return arrayType(schema, walk)
  return "unknown"
}

const ofType = (name: unknown, schema: Record<string, unknown>, walk: Walk): string => {
  switch (name) {
    case "string":
      return "string"
    case "number":
    case "integer":
      return "number"
    case "boolean":
      return "boolean"
    case "null":
      return "null"
    case "object":
      return objectType(schema, walk)
    case "array":
      return arrayType(schema, walk)
    default:
      return unknownBecause("a type JSON Schema does not define")
  }
}

const doc = (schema: unknown, indent: string): string => {
  if (!isObject(schema)) return ""
  const description = own(schema, "description")
  if (typeof description !== "string" || description.trim() === "") return ""
  return `${indent}/** ${commentSafe(description.trim()).replaceAll(/\r?\n/g, `\n${indent} * `)} */\n`
}

const objectType = (schema: Record<string, unknown>, walk: Walk): string => {
  const inner = deeper(walk, "object", true)
  const properties = own(schema, "properties")
  const required = own(schema, "required")
  const requiredNames = new Set(Array.isArray(required) ? required.filter((name) => typeof name === "string") : [])
  const members: Array<string> = []
  const memberTypes: Array<string> = []
  let optional = false
  const names = isObject(properties) ? Object.keys(properties) : []
  for (const name of names) {
    const property = (properties as Record<string, unknown>)[name]
    const type = typeOf(property, inner)
    const isRequired = requiredNames.has(name)
    optional ||= !isRequired
    memberTypes.push(type)
    members.push(`${doc(property, inner.indent)}${inner.indent}${propertyName(name)}${isRequired ? "" : "?"}: ${type}`)
  }
  // Required names without a property schema are still required, of any value.
  for (const name of requiredNames) {
    if (names.includes(name)) continue
    memberTypes.push("unknown")
    members.push(`${inner.indent}${propertyName(name)}: unknown`)
  }
  const rest: Array<string> = []
  const additional = own(schema, "additionalProperties")
  const patterns = own(schema, "patternProperties")
  if (
    additional === true ||
    (additional === undefined && names.length === 0 && requiredNames.size === 0 && !isObject(patterns))
  ) {
    rest.push("unknown")
  } else if (additional !== undefined && additional !== false) {
    rest.push(typeOf(additional, inner))
  }
  if (isObject(patterns)) for (const key of Object.keys(patterns)) rest.push(typeOf(patterns[key], inner))
  if (rest.length > 0) {
    // Every property must fit the index signature.
    const all = union([...rest, ...memberTypes, ...(optional ? ["undefined"] : [])])
    members.push(`${inner.indent}[key: string]: ${all}`)
  }
  // Nothing may be in it: `{}` would accept any value but null and undefined.
  if (members.length === 0) return "{ [key: string]: never }"
  return `{\n${members.join("\n")}\n${walk.indent}}`
}

const arrayType = (schema: Record<string, unknown>, walk: Walk): string => {
  const inner = deeper(walk, "array", false)
  const prefix = own(schema, "prefixItems")
  const items = own(schema, "items")
  // Draft 4 to 2019-09: an `items` array and `additionalItems`.
  const tuple = Array.isArray(prefix) ? prefix : Array.isArray(items) ? items : undefined
  if (tuple === undefined) return `Array<${items === undefined ? "unknown" : typeOf(items, inner)}>`
  const restSchema = Array.isArray(prefix) ? items : own(schema, "additionalItems")
  const minItems = own(schema, "minItems")
  const least = typeof minItems === "number" ? minItems : 0
  // Resolved at once: `type T = [T?, ...Array<unknown>]` is circular.
  const open = restSchema !== false
  const element = open || tuple.length > least ? deeper(walk, "rest", false) : inner
  const elements = tuple.map((item, i) => `${group(typeOf(item, element))}${i < least ? "" : "?"}`)
  if (open) elements.push(`...Array<${restSchema === undefined ? "unknown" : typeOf(restSchema, element)}>`)
  return `[${elements.join(", ")}]`
}

/** @internal */
export const render = (document: Document): string =>
  typeOf(document.root, { document, depth: 0, expanding: new Set(["#"]), guarded: false, eager: false, indent: "" })
