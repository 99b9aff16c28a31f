/**
 * Reading the data plane's messages: a decoder that never throws on a hostile value, and the hand-written checks of
 * the messages every call carries (a request, its success, a direct request's start and end), which spare building
 * a parse tree on the hot path. Anything they do not pass goes through the Schema and its errors.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
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

const methods: ReadonlySet<unknown> = new Set(Messages.Method.literals)

// The message of every call, checked by hand: the same rules as `RequestMessage`, without building a parse tree.
// Anything else, or anything that does not pass, goes through the Schema and its errors.
const isTraceContext = (raw: unknown): boolean =>
  Array.isArray(raw) &&
  raw.length >= 3 &&
  raw.length <= 5 &&
  typeof raw[0] === "string" &&
  typeof raw[1] === "string" &&
  typeof raw[2] === "boolean" &&
  (raw.length < 4 || typeof raw[3] === "string") &&
  (raw.length < 5 || typeof raw[4] === "string")

const isPlainRequest = (raw: unknown): raw is typeof Messages.RequestMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Request" &&
    typeof message.requestId === "string" &&
    methods.has(message.method) &&
    typeof message.params === "string" &&
    typeof message.timeoutMs === "number" &&
    (message.progress === undefined || typeof message.progress === "boolean") &&
    (message.saveTo === undefined || typeof message.saveTo === "string") &&
    (message.spill === undefined || message.spill === false || typeof message.spill === "string") &&
    (message.replyTo === undefined || isReplyTo(message.replyTo)) &&
    (message.seen === undefined || typeof message.seen === "number") &&
    (message.trace === undefined || isTraceContext(message.trace))
  )
}

const isReplyTo = (raw: unknown): boolean => {
  if (typeof raw !== "object" || raw === null) return false
  const replyTo = raw as Record<string, unknown>
  return typeof replyTo.channel === "string" && typeof replyTo.callId === "number"
}

/** @internal */
export const decodeOwnerMessage = (
  raw: unknown
): Either.Either<typeof Messages.OwnerMessage.Type, ParseResult.ParseError> =>
  isPlainSuccess(raw) || isPlainDelivered(raw) || isPlainStarted(raw)
    ? Either.right(raw)
    : decodeOwnerMessageSchema(raw)

const decodeOwnerMessageSchema = safeDecoder(Messages.OwnerMessage)

// The answer of every call, checked by hand as `SuccessMessage` would check it.
const isPlainSuccess = (raw: unknown): raw is typeof Messages.SuccessMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Success" &&
    typeof message.requestId === "string" &&
    typeof message.result === "string" &&
    typeof message.envelope === "boolean"
  )
}

// The end of every call whose success went straight to a remote caller, checked by hand as `DeliveredMessage` would.
const isPlainDelivered = (raw: unknown): raw is typeof Messages.DeliveredMessage.Type =>
  typeof raw === "object" &&
  raw !== null &&
  (raw as Record<string, unknown>)._tag === "Delivered" &&
  typeof (raw as Record<string, unknown>).requestId === "string" &&
  ((raw as Record<string, unknown>).isError === undefined ||
    typeof (raw as Record<string, unknown>).isError === "boolean") &&
  ((raw as Record<string, unknown>).spilled === undefined ||
    typeof (raw as Record<string, unknown>).spilled === "number")

// The start of every call a remote caller sent an owner thread directly, checked by hand as `StartedMessage` would.
const isPlainStarted = (raw: unknown): raw is typeof Messages.StartedMessage.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Started" &&
    typeof message.requestId === "string" &&
    methods.has(message.method) &&
    isReplyTo(message.replyTo) &&
    typeof message.deadline === "number" &&
    (message.trace === undefined || isTraceContext(message.trace))
  )
}

/** @internal */
export const encodeOwnerMessage = Schema.encodeSync(Messages.OwnerMessage)
