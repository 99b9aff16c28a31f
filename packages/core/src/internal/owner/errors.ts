/** The errors the SDK and the transports throw at the owner. */
import { type SdkError, SdkErrorCode } from "@modelcontextprotocol/client"
import { InputRoundsExceeded, UnusableResult } from "../../McpWorkerError.js"

/** C95: the owner's own requests. @internal */
export type OwnRequest = "server/discover" | "tools/list"

/** The transport skips the rest of the message unread. @internal */
export class OversizedMessage extends Error {
  override readonly name = "OversizedMessage"
  constructor(
    readonly bytes: number,
    readonly limit: number,
    readonly spillFailed?: string | undefined,
    /** C95: `limit` is the owner's own bound, not a caller's result. */
    readonly ownRequest?: OwnRequest | undefined
  ) {
    super(
      ownRequest === undefined
        ? `a message from the server passed maxResultBytes (${bytes} > ${limit} bytes)`
        : `a message from the server during the owner's ${ownRequest} passed its bound (${bytes} > ${limit} bytes)`
    )
  }
}

/** C54 @internal */
export class StreamBroken extends Error {
  override readonly name = "StreamBroken"
  constructor() {
    super("the response stream of a request ended before its response")
  }
}

/** C123, C71 @internal */
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

/** C71 @internal */
export const without = (taskId: unknown, text: string | undefined): string | undefined =>
  typeof taskId !== "string" || taskId === "" || text === undefined ? text : text.split(taskId).join("[task]")

/** @internal */
export const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : "unknown error"

/** @internal */
export const isSchemaError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues)

/** C24 @internal */
export const schemaErrorSummary = (error: unknown): string => {
  const issues = (error as { issues: Array<{ path?: Array<unknown>; code?: unknown }> }).issues
  return issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "(root)"}: ${String(issue.code ?? "invalid")}`)
    .join("; ")
}

/** C53: fixed words, nothing from the server. @internal */
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
