/** Reading the data plane's messages; each fast check is derived from its message's Schema. */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Messages from "./messages.js"

/** Accepts exactly what decoding accepts; an unknown node throws when the module loads, never at a call. @internal */
export const fastCheck = <A, I>(schema: Schema.Schema<A, I, never>): ((u: unknown) => u is A) =>
  checkOf(schema.ast) as (u: unknown) => u is A

type Check = (u: unknown) => boolean

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
      throw new Error(`fastCheck: no fast check for a ${ast._tag} node`)
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

const tupleOf = (ast: SchemaAST.TupleType): Check => {
  if (ast.rest.length > 0) throw new Error("fastCheck: no fast check for a tuple with rest elements")
  const checks = ast.elements.map((element) => checkOf(element.type))
  const required = ast.elements.filter((element) => !element.isOptional).length
  return (u) =>
    Array.isArray(u) &&
    u.length >= required &&
    u.length <= checks.length &&
    u.every((element, i) => checks[i]!(element))
}

const structOf = (ast: SchemaAST.TypeLiteral): Check => {
  if (ast.indexSignatures.length > 0) throw new Error("fastCheck: no fast check for an index signature")
  // Most values that fail are another message.
  const fields = [...ast.propertySignatures]
    .sort((a, b) => (a.name === "_tag" ? -1 : b.name === "_tag" ? 1 : 0))
    .map((field) => {
      if (typeof field.name !== "string") throw new Error("fastCheck: no fast check for a symbol key")
      const check = checkOf(field.type)
      return { name: field.name, check: field.isOptional ? (u: unknown) => u === undefined || check(u) : check }
    })
  return (u) => {
    if (typeof u !== "object" || u === null) return false
    const record = u as Record<string, unknown>
    for (const field of fields) if (!field.check(record[field.name])) return false
    return true
  }
}

/** @internal */
export const safeDecoder = <A, I>(
  schema: Schema.Schema<A, I, never>
): ((raw: unknown) => Either.Either<A, ParseResult.ParseError>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (raw) => {
    try {
      return decode(raw)
    } catch {
      return Either.left(
        new ParseResult.ParseError({ issue: new ParseResult.Type(schema.ast, raw, "could not be inspected") })
      )
    }
  }
}

/** @internal */
export const decodeHostMessage = (raw: unknown): Either.Either<Messages.HostMessage, ParseResult.ParseError> =>
  isPlainRequest(raw) ? Either.right(raw) : decodeHostMessageSchema(raw)

const decodeHostMessageSchema = safeDecoder(Messages.HostMessage)

// What does not pass goes through the Schema and its errors.
const isPlainRequest = fastCheck(Messages.RequestMessage)

const isPlainSuccess = fastCheck(Messages.SuccessMessage)

/** @internal */
export const decodeOwnerMessage = (raw: unknown): Either.Either<Messages.OwnerMessage, ParseResult.ParseError> =>
  isPlainSuccess(raw) ? Either.right(raw) : decodeOwnerMessageSchema(raw)

const decodeOwnerMessageSchema = safeDecoder(Messages.OwnerMessage)

/** @internal */
export const encodeOwnerMessage: (message: Messages.OwnerMessage) => typeof Messages.OwnerMessage.Encoded =
  Schema.encodeSync(Messages.OwnerMessage)
