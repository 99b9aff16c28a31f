/**
 * A message's fast check, derived from its Schema: a predicate that accepts exactly what decoding the Schema accepts,
 * without building a parse tree or an error. The hot messages (a request, its success) are read this way on every
 * call; what does not pass goes through the Schema for its errors. One text of the rules, the Schema's.
 *
 * @internal
 */
import * as SchemaAST from "effect/SchemaAST"
import type * as Schema from "effect/Schema"

type Check = (u: unknown) => boolean

/**
 * The predicate of `schema`. Only the plain shapes messages use are known (structs, tuples, unions, literals,
 * strings, numbers, booleans, `undefined`); any other node throws when the module loads, never at a call.
 *
 * @internal
 */
export const compile = <A, I>(schema: Schema.Schema<A, I, never>): ((u: unknown) => u is A) =>
  checkOf(schema.ast) as (u: unknown) => u is A

const isString: Check = (u) => typeof u === "string"
const isNumber: Check = (u) => typeof u === "number"
const isBoolean: Check = (u) => typeof u === "boolean"
const isUndefined: Check = (u) => u === undefined

const checkOf = (ast: SchemaAST.AST): Check => {
  switch (ast._tag) {
    case "StringKeyword":
      return isString
    case "NumberKeyword":
      return isNumber
    case "BooleanKeyword":
      return isBoolean
    case "UndefinedKeyword":
      return isUndefined
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union":
      return unionOf(ast)
    case "TupleType":
      return tupleOf(ast)
    case "TypeLiteral":
      return structOf(ast)
    default:
      throw new Error(`FastCheck: no fast check for a ${ast._tag} node`)
  }
}

const unionOf = (ast: SchemaAST.Union): Check => {
  if (ast.types.every(SchemaAST.isLiteral)) {
    const literals: ReadonlySet<unknown> = new Set(ast.types.map((member) => (member as SchemaAST.Literal).literal))
    return (u) => literals.has(u)
  }
  const checks = ast.types.map(checkOf)
  return (u) => checks.some((check) => check(u))
}

// Optional elements follow the required ones: an array of any length between the two counts, each element there
// holding a value its type accepts.
const tupleOf = (ast: SchemaAST.TupleType): Check => {
  if (ast.rest.length > 0) throw new Error("FastCheck: no fast check for a tuple with rest elements")
  const checks = ast.elements.map((element) => checkOf(element.type))
  const required = ast.elements.filter((element) => !element.isOptional).length
  return (u) =>
    Array.isArray(u) &&
    u.length >= required &&
    u.length <= checks.length &&
    u.every((element, i) => checks[i]!(element))
}

const structOf = (ast: SchemaAST.TypeLiteral): Check => {
  if (ast.indexSignatures.length > 0) throw new Error("FastCheck: no fast check for an index signature")
  // The tag first: most values that fail are another message.
  const fields = [...ast.propertySignatures]
    .sort((a, b) => (a.name === "_tag" ? -1 : b.name === "_tag" ? 1 : 0))
    .map((field) => {
      if (typeof field.name !== "string") throw new Error("FastCheck: no fast check for a symbol key")
      const check = checkOf(field.type)
      // An optional field may be absent; a required one must hold a value its type accepts.
      return { name: field.name, check: field.isOptional ? (u: unknown) => u === undefined || check(u) : check }
    })
  return (u) => {
    if (typeof u !== "object" || u === null) return false
    const record = u as Record<string, unknown>
    for (const field of fields) if (!field.check(record[field.name])) return false
    return true
  }
}
