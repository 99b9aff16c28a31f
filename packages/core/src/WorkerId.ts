/**
 * Opaque ids. A `WorkerId` names one open worker for as long as it is open; a `RequestId` names one request in
 * flight. Both are random strings (no counter, no thread id, no timestamp), so they can be stored anywhere, passed
 * between threads as plain strings, and never guessed or confused with an id of another worker or another process.
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"

/**
 * `mcpw_` followed by 22 base64url characters holding 128 random bits.
 *
 * @since 0.1.0
 * @category models
 */
export type WorkerId = string & Brand.Brand<"WorkerId">

/**
 * `req_` followed by 16 base64url characters holding 96 random bits.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestId = string & Brand.Brand<"RequestId">

/**
 * The prefix of every worker id.
 *
 * @since 0.1.0
 * @category constants
 */
export const workerIdPrefix = "mcpw_"

/**
 * The prefix of every request id.
 *
 * @since 0.1.0
 * @category constants
 */
export const requestIdPrefix = "req_"

/**
 * A fresh worker id with 128 bits from the platform's cryptographic random source.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): WorkerId => (workerIdPrefix + randomBase64url(16)) as WorkerId

/**
 * A fresh request id with 96 bits from the platform's cryptographic random source. It is random rather than a
 * per-worker counter so that a request id of one worker can never match a request of another.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRequestId = (): RequestId => (requestIdPrefix + randomBase64url(12)) as RequestId

// 128 bits make 21 full base64url digits plus one digit carrying the last 2 bits, whose low 4 bits are zero: only
// `A`, `Q`, `g` and `w` can end an id that `make` produced.
const workerIdPattern = /^mcpw_[A-Za-z0-9_-]{21}[AQgw]$/

const requestIdPattern = /^req_[A-Za-z0-9_-]{16}$/

/**
 * Whether a value is a string in exactly the form `make` produces.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWorkerId = (u: unknown): u is WorkerId => typeof u === "string" && workerIdPattern.test(u)

/**
 * Whether a value is a string in exactly the form `makeRequestId` produces.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRequestId = (u: unknown): u is RequestId => typeof u === "string" && requestIdPattern.test(u)

/**
 * Accepts only the exact form `make` produces; any other value (wrong type, length, prefix or characters) is none.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (input: unknown): Option.Option<WorkerId> =>
  isWorkerId(input) ? Option.some(input) : Option.none()

/**
 * Accepts only the exact form `makeRequestId` produces.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRequestId = (input: unknown): Option.Option<RequestId> =>
  isRequestId(input) ? Option.some(input) : Option.none()

// internal

// Random bytes are drawn from the platform a pool at a time: one `getRandomValues` per id cost more than the rest
// of a call's host-side work. Every byte is used once.
const pool = new Uint8Array(16 * 48)
let poolAt = pool.length

// Encoding's encoder over the pool costs about 0.2 µs more per id than the unrolled loop it replaced: nothing a
// call (hundreds of µs) can show.
const randomBase64url = (byteCount: number): string => {
  if (poolAt + byteCount > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    poolAt = 0
  }
  const start = poolAt
  poolAt += byteCount
  return Encoding.encodeBase64Url(pool.subarray(start, poolAt))
}
