/**
 * The remote protocol's decoders and encoder. The messages of every call (a remote's request to the host or straight
 * to an owner thread, an owner thread's `Result`) are read by fast checks derived from their Schemas, without building
 * a parse tree; anything else, or anything that does not pass, goes through the Schema and its errors.
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
 * Validates what a remote posted on an owner thread's channel; a request (every direct call) by the fast check of
 * `Direct`, the rest by the Schema.
 *
 * @internal
 */
export const decodeOwnerChannelMessage = (
  raw: unknown
): Either.Either<Protocol.OwnerChannelMessage, ParseResult.ParseError> =>
  isPlainDirect(raw) ? Either.right(raw) : decodeOwnerChannelSchema(raw)

/**
 * Validates what a remote posted to the host. A request of the operation table (every call) takes the fast check of
 * `RemoteRequest` with a `RemoteCall`; anything else, or anything that does not pass, goes through the Schema and its
 * errors.
 *
 * @internal
 */
export const decodeRemoteMessage = (raw: unknown): Either.Either<Protocol.RemoteMessage, ParseResult.ParseError> =>
  isPlainCallRequest(raw) ? Either.right(raw) : decodeRemoteMessageSchema(raw)

/**
 * Validates what a remote received on its reply channel; the success an owner thread posts (`Result`, every direct
 * call) by its fast check, the rest by the Schema.
 *
 * @internal
 */
export const decodeReply = (raw: unknown): Either.Either<Protocol.Reply, ParseResult.ParseError> =>
  isPlainResult(raw) ? Either.right(raw) : decodeReplySchema(raw)

// The messages of every call, read without a parse tree by checks derived from their Schemas. Of a remote's requests
// to the host, only those of the operation table (every call) take the fast path.
const isPlainCallRequest = OwnerProtocol.fastCheck(
  Schema.Struct({ ...Protocol.RemoteRequest.fields, operation: Protocol.RemoteCall })
)

const isPlainDirect = OwnerProtocol.fastCheck(Protocol.Direct)

const isPlainResult = OwnerProtocol.fastCheck(Protocol.Result)

/** @internal */
export const encodeReply = Schema.encodeSync(Protocol.Reply)

/** @internal */
export const decodeAnnouncement = OwnerProtocol.safeDecoder(Protocol.Announcement)
