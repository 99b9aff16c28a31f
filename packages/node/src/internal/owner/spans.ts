/** @internal */
import type { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Tracer from "effect/Tracer"
import * as Traced from "../shared/traced.js"

/** The owner knows nothing of tracing. @internal */
export interface OwnerSpans {
  readonly received: (message: unknown) => void
  readonly posted: (message: OwnerProtocol.OwnerMessageEncoded) => OwnerProtocol.OwnerMessageEncoded
  readonly direct: (trace: OwnerProtocol.TraceContext, handle: () => void) => void
  /** Only while `direct` runs. */
  readonly taken: (requestId: string, method: string) => void
  /** Absent: refused, never taken. */
  readonly answered: (requestId: string | undefined, error: McpWorkerError | undefined) => void
  readonly opened: (workerId: string) => void
  readonly close: () => void
  /** C83 */
  readonly spanOf: (requestId: string) => OwnerProtocol.TraceContext | undefined
}

/** @internal */
export const makeSpans = (tracing: Traced.Tracing): OwnerSpans => {
  const spans = new Map<string, Tracer.Span>()
  let workerId = ""
  let direct: OwnerProtocol.TraceContext | undefined
  const start = (trace: OwnerProtocol.TraceContext, method: string, isDirect: boolean) =>
    Traced.startSpan(tracing, "Owner.request", trace, { workerId, method, direct: isDirect })
  const end = (requestId: string, exit: Exit.Exit<unknown, unknown>) => {
    const span = spans.get(requestId)
    if (span === undefined) return
    spans.delete(requestId)
    Traced.endSpan(tracing, span, exit)
  }
  return {
    received: (message) => {
      const raw = message as { _tag?: unknown; requestId?: unknown; method?: unknown; trace?: unknown } | null
      if (typeof raw?.requestId !== "string") return
      if (raw._tag === "Cancel") return end(raw.requestId, Exit.interrupt(FiberId.none))
      const decoded =
        raw._tag === "Request" && raw.trace !== undefined ? OwnerProtocol.decodeHostMessage(raw) : undefined
      if (decoded === undefined || Either.isLeft(decoded) || decoded.right._tag !== "Request") return
      const request = decoded.right
      if (request.trace !== undefined) spans.set(request.requestId, start(request.trace, request.method, false))
    },
    posted: (message) => {
      switch (message._tag) {
        case "Success":
          end(message.requestId, Exit.void)
          return message
        case "Failure":
          end(message.requestId, Exit.fail(message.error))
          return message
        case "CancelAnswer":
          if (message.cancelled) end(message.requestId, Exit.interrupt(FiberId.none))
          return message
        default:
          return message
      }
    },
    direct: (trace, handle) => {
      direct = trace
      try {
        handle()
      } finally {
        direct = undefined
      }
    },
    taken: (requestId, method) => {
      if (direct !== undefined) spans.set(requestId, start(direct, method, true))
    },
    answered: (requestId, error) => {
      const exit = error === undefined ? Exit.void : Exit.fail(error)
      if (requestId !== undefined) return end(requestId, exit)
      if (direct !== undefined) Traced.endSpan(tracing, start(direct, "", true), exit)
    },
    opened: (id) => {
      workerId = id
    },
    spanOf: (requestId) => {
      const span = spans.get(requestId)
      return span === undefined ? undefined : OwnerProtocol.traceContextOf(span)
    },
    close: () => {
      for (const requestId of Array.from(spans.keys())) end(requestId, Exit.interrupt(FiberId.none))
    }
  }
}
