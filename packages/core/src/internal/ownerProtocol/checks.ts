/**
 * Reading the data plane's messages: a decoder that never throws on a hostile value, and the fast checks (derived from
 * the Schemas) of the messages every call carries (a request, its success), which spare building
 * a parse tree on the hot path. Anything they do not pass goes through the Schema and its errors.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as FastCheck from "./fastCheck.js"
import * as Messages from "./messages.js"

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
export const decodeHostMessage = (
  raw: unknown
): Either.Either<typeof Messages.HostMessage.Type, ParseResult.ParseError> =>
  isPlainRequest(raw) ? Either.right(raw) : decodeHostMessageSchema(raw)

const decodeHostMessageSchema = safeDecoder(Messages.HostMessage)

// The message of every call and its answer, read without a parse tree; anything else, or anything that does not
// pass, goes through the Schema and its errors.
const isPlainRequest = FastCheck.compile(Messages.RequestMessage)

const isPlainSuccess = FastCheck.compile(Messages.SuccessMessage)

/** @internal */
export const decodeOwnerMessage = (
  raw: unknown
): Either.Either<typeof Messages.OwnerMessage.Type, ParseResult.ParseError> =>
  isPlainSuccess(raw) ? Either.right(raw) : decodeOwnerMessageSchema(raw)

const decodeOwnerMessageSchema = safeDecoder(Messages.OwnerMessage)

/** @internal */
export const encodeOwnerMessage = Schema.encodeSync(Messages.OwnerMessage)
