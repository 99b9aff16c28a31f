/**
 * The owner thread's spans: each request whose caller was tracing is followed on the data plane's messages, so the
 * owner itself knows nothing of tracing.
 *
 * @internal
 */
import type { McpWorkerError } from "@mcp-worker/core/McpWorkerError"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Tracer from "effect/Tracer"
import * as Traced from "../shared/traced.js"

/**
 * The owner's spans of the requests whose caller was tracing (they carry its span's context, `trace`), in an owner
 * thread whose runtime has a tracer: each opened as the child of the caller's span when the request arrives, and ended
 * when the owner posts its end. Followed on the data plane's messages, so the owner itself knows nothing of tracing.
 *
 * @internal
 */
export interface OwnerSpans {
  /** A message from the host, before the owner handles it. */
  readonly received: (message: unknown) => void
  /** A message to the host, as it is posted. */
  readonly posted: (message: OwnerProtocol.OwnerMessageEncoded) => OwnerProtocol.OwnerMessageEncoded
  /** Runs the owner's handling of a remote caller's request that carries its span. */
  readonly direct: (trace: OwnerProtocol.TraceContext, handle: () => void) => void
  /** A remote caller's request was taken directly (while `direct` runs its handling): its span begins. */
  readonly taken: (requestId: string, method: string) => void
  /** A request taken directly was answered straight to its caller (`requestId` absent: refused, never taken). */
  readonly answered: (requestId: string | undefined, error: McpWorkerError | undefined) => void
  readonly opened: (workerId: string) => void
  readonly close: () => void
  /** The owner's span of a request, as the context its server is given (C83). */
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
