/**
 * The remote protocol's decoders and encoder. The messages of every call are checked by hand with the rules of their
 * Schemas, without building a parse tree (a remote's request to the host or straight to an owner thread, an owner
 * thread's `Result`: `test/node/RemoteProtocol.test.ts` holds each check to its Schema with random messages); anything
 * else, or anything that does not pass, goes through the Schema and its errors.
 *
 * @internal
 */
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Protocol from "./remoteProtocol.js"

const decodeRemoteMessageSchema = OwnerProtocol.safeDecoder(Protocol.RemoteMessage)

const decodeReplySchema = OwnerProtocol.safeDecoder(Protocol.Reply)

const decodeOwnerChannelSchema = OwnerProtocol.safeDecoder(Protocol.OwnerChannelMessage)

/**
 * Validates what a remote posted on an owner thread's channel; a request (every direct call) is checked by hand with
 * the rules of `Direct`, the rest by the Schema.
 *
 * @internal
 */
export const decodeOwnerChannelMessage = (
  raw: unknown
): Either.Either<Protocol.OwnerChannelMessage, ParseResult.ParseError> =>
  isPlainDirect(raw) ? Either.right(raw) : decodeOwnerChannelSchema(raw)

/**
 * Validates what a remote posted to the host. A request of the operation table (every call) is checked by hand with
 * the rules of `RemoteRequest` and `RemoteCall`, without building a parse tree; anything else, or anything that does not pass,
 * goes through the Schema and its errors.
 *
 * @internal
 */
export const decodeRemoteMessage = (raw: unknown): Either.Either<Protocol.RemoteMessage, ParseResult.ParseError> =>
  isPlainCallRequest(raw) ? Either.right(raw) : decodeRemoteMessageSchema(raw)

/**
 * Validates what a remote received on its reply channel; the success an owner thread posts (`Result`, every direct
 * call) is checked by hand, the rest by the Schema.
 *
 * @internal
 */
export const decodeReply = (raw: unknown): Either.Either<Protocol.Reply, ParseResult.ParseError> =>
  isPlainResult(raw) ? Either.right(raw) : decodeReplySchema(raw)

const methods: ReadonlySet<unknown> = new Set(OwnerProtocol.Method.literals)

const isOptional = (value: unknown, type: "number" | "string" | "boolean"): boolean =>
  value === undefined || typeof value === type

const isOptionalSpill = (value: unknown): boolean => value === undefined || value === false || typeof value === "string"

const isOptionalTrace = (value: unknown): boolean =>
  value === undefined ||
  (Array.isArray(value) &&
    value.length === 3 &&
    typeof value[0] === "string" &&
    typeof value[1] === "string" &&
    typeof value[2] === "boolean")

const isPlainCallRequest = (raw: unknown): raw is typeof Protocol.RemoteRequest.Type => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  if (
    message._tag !== "RemoteRequest" ||
    typeof message.from !== "string" ||
    typeof message.callId !== "number" ||
    !isOptional(message.ackBy, "number") ||
    !isOptionalTrace(message.trace) ||
    typeof message.operation !== "object" ||
    message.operation === null
  ) {
    return false
  }
  const operation = message.operation as Record<string, unknown>
  return (
    operation._tag === "RemoteCall" &&
    typeof operation.workerId === "string" &&
    methods.has(operation.method) &&
    typeof operation.params === "string" &&
    isOptional(operation.deadline, "number") &&
    isOptional(operation.progress, "boolean") &&
    isOptional(operation.saveTo, "string") &&
    isOptionalSpill(operation.spill) &&
    isOptional(operation.direct, "boolean")
  )
}

const isPlainDirect = (raw: unknown): raw is Protocol.Direct => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Direct" &&
    typeof message.from === "string" &&
    typeof message.callId === "number" &&
    methods.has(message.method) &&
    typeof message.params === "string" &&
    typeof message.deadline === "number" &&
    isOptional(message.saveTo, "string") &&
    isOptionalSpill(message.spill) &&
    isOptionalTrace(message.trace)
  )
}

const isPlainResult = (raw: unknown): raw is Protocol.Result => {
  if (typeof raw !== "object" || raw === null) return false
  const message = raw as Record<string, unknown>
  return (
    message._tag === "Result" &&
    typeof message.callId === "number" &&
    typeof message.result === "string" &&
    typeof message.envelope === "boolean"
  )
}

/** @internal */
export const encodeReply = Schema.encodeSync(Protocol.Reply)

/** @internal */
export const decodeAnnouncement = OwnerProtocol.safeDecoder(Protocol.Announcement)
