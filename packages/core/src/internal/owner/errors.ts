/**
 * What the owner reads out of the errors the SDK and the transports throw at it: their text, and whether a result
 * broke the protocol's schema. The typed errors it answers with are `McpWorkerError`'s.
 */
import { type SdkError, SdkErrorCode } from "@modelcontextprotocol/client"
import { InputRoundsExceeded, UnusableResult } from "../../McpWorkerError.js"

/**
 * A request the owner sends of its own accord, not a caller's: the era probe, the tool listing it reads for tasks
 * (C95).
 *
 * @internal
 */
export type OwnRequest = "server/discover" | "tools/list"

/**
 * Reported by a transport through `onerror` when a message from the server passed the config's `maxResultBytes`:
 * the transport skips the rest of it unread, and the owner fails the request in flight with `ResultTooLarge`.
 *
 * @internal
 */
export class OversizedMessage extends Error {
  override readonly name = "OversizedMessage"
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** Why the result could not be spilled, when the request had a spill (`onTooLarge`). */
    readonly spillFailed?: string | undefined,
    /** The owner's own request in flight (C95), whose bound `limit` is: the message is no caller's result. */
    readonly ownRequest?: OwnRequest | undefined
  ) {
    super(
      ownRequest === undefined
        ? `a message from the server passed maxResultBytes (${bytes} > ${limit} bytes)`
        : `a message from the server during the owner's ${ownRequest} passed its bound (${bytes} > ${limit} bytes)`
    )
  }
}

/**
 * Reported by a transport through `onerror` when the response stream of a request ended before its response (a
 * 2026-07-28 Streamable HTTP exchange, which nothing resumes): the owner ends the request in flight with
 * `DeliveryUnknown` and never sends it again (C54).
 *
 * @internal
 */
export class StreamBroken extends Error {
  override readonly name = "StreamBroken"
  constructor() {
    super("the response stream of a request ended before its response")
  }
}

/**
 * A task awaited by `taskResult` that ended without a result, as the owner read its final state: the request ends as
 * `TaskEnded` (C123). Its words are the server's, the task's id already taken out (C71).
 *
 * @internal
 */
export class TaskEndedWithout extends Error {
  override readonly name = "TaskEndedWithout"
  constructor(
    readonly state: "cancelled" | "failed",
    readonly statusMessage: string | undefined,
    readonly code: number | undefined
  ) {
    super(`the task ended ${state}`)
  }
}

/** `text` with the task's id taken out (C71). @internal */
export const without = (taskId: unknown, text: string | undefined): string | undefined =>
  typeof taskId !== "string" || taskId === "" || text === undefined ? text : text.split(taskId).join("[task]")

/** @internal */
export const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : "unknown error"

/** @internal */
export const isSchemaError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues)

/** A schema error lists where the result broke the protocol; only paths and codes, never values. @internal */
export const schemaErrorSummary = (error: unknown): string => {
  const issues = (error as { issues: Array<{ path?: Array<unknown>; code?: unknown }> }).issues
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "(root)"}: ${String(issue.code ?? "invalid")}`)
    .join("; ")
}

/**
 * What the SDK's multi-round-trip driver and result decoding refuse (C53): a server that asks past the round limit,
 * a `resultType` it does not know, an `input_required` it cannot act on. The call ends; nothing is retried. The
 * words are fixed: what a server put in its answer (keys, methods, values) never reaches an error message.
 *
 * @internal
 */
export const unusableOf = (
  workerId: string,
  requestId: string,
  error: SdkError
): InputRoundsExceeded | UnusableResult | undefined => {
  const unusable = (reason: UnusableResult["reason"], detail: string) =>
    new UnusableResult({ workerId, requestId, reason, detail, delivery: "unknown" })
  switch (error.code) {
    case SdkErrorCode.InputRequiredRoundsExceeded: {
      const rounds = (error.data as { rounds?: unknown } | undefined)?.rounds
      return new InputRoundsExceeded({
        workerId,
        requestId,
        rounds: typeof rounds === "number" ? rounds : 0,
        delivery: "unknown"
      })
    }
    case SdkErrorCode.UnsupportedResultType:
      return unusable("unknown_result_type", "the result's resultType is none the client speaks")
    case SdkErrorCode.CapabilityNotSupported:
      return unusable("no_handler", "the server asked for input that no handler of the host answers")
    case SdkErrorCode.InvalidResult:
      return /input.required|input request/i.test(error.message)
        ? unusable("malformed_input_required", "the input_required answer has no usable inputRequests or requestState")
        : unusable("invalid_result", "the result does not match the protocol's schema")
    default:
      return undefined
  }
}
