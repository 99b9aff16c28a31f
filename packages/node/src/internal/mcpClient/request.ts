/** A client's requests, all in the calling fiber's own step. @internal */
import {
  DeadlineExceeded,
  type InvalidInput,
  type RequestError,
  RequestNotPending
} from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import * as Prepare from "@mcp-worker/core/protocol/Prepare"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Connection from "../shared/connection.js"
import { tracedWith } from "../shared/traced.js"
import type { Client } from "./record.js"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// `WorkerId.makeRequestId`'s form, its random part drawn once per client: per request, it cost more than the rest.
const nextRequestId = (client: Client): string => {
  const n = client.requestCount++ & 0xffffff
  return (
    client.requestIdStem +
    alphabet[n >>> 18]! +
    alphabet[(n >>> 12) & 63]! +
    alphabet[(n >>> 6) & 63]! +
    alphabet[n & 63]!
  )
}

const refusal = (client: Client): RequestError | undefined => Connection.refusal(client, "the client is closed")

// C22a
const spent = (client: Client) => Effect.fail(new DeadlineExceeded({ workerId: client.workerId, delivery: "not_sent" }))

// The whole of the client's own work on the hot path.
class InFlight extends Connection.InFlight<Client> {
  protected post(cancel: typeof OwnerProtocol.CancelMessage.Encoded): void {
    this.holder.owner.onMessage(cancel)
  }
}

// The owner may answer before `onMessage` returns, so what completes the request is in place before it is handed over.
const start = (
  client: Client,
  operation: Operations.Any,
  args: ReadonlyArray<unknown>,
  options: (Operations.RequestOptions & { readonly signal?: AbortSignal | undefined }) | undefined,
  trace: OwnerProtocol.TraceContext | undefined,
  resume: (effect: Effect.Effect<unknown, RequestError>) => void
): Effect.Effect<void> | void => {
  const started = Date.now()
  // No spill here: this client reads results itself, so one is refused, never ignored.
  const prepared = Prepare.prepare(operation, args, options, paramsContext)
  if (Either.isLeft(prepared)) return resume(Effect.fail(prepared.left))
  const { budgetMs, idleMs, params } = prepared.right
  const refused = refusal(client)
  if (refused !== undefined) return resume(Effect.fail(refused))
  const left = (budgetMs ?? client.defaultTimeoutMs) - (Date.now() - started)
  if (left <= 0) return resume(spent(client))
  const requestId = nextRequestId(client)
  const onProgress = options?.onProgress
  const signal = options?.signal
  const inflight = new InFlight(client, requestId, resume, onProgress, undefined)
  client.pending = inflight
  // C175: no timer here: the owner runs in this thread, so its deadline is the one this client would arm.
  if (signal !== undefined) inflight.abortOn(signal)
  client.owner.onMessage({
    _tag: "Request",
    requestId,
    method: operation.method,
    params,
    deadline: Date.now() + left,
    ...(idleMs === undefined ? {} : { idleMs }),
    ...(onProgress === undefined ? {} : { progress: true }),
    // C83
    ...(trace === undefined ? {} : { trace })
  })
  return Effect.sync(() => inflight.end("interrupted"))
}

const paramsContext: Operations.ParamsContext = { isProxy: Connection.isProxy }

/** @internal */
export const run = (
  client: Client,
  operation: Operations.Any,
  args: ReadonlyArray<unknown>,
  options: (Operations.RequestOptions & { readonly signal?: AbortSignal | undefined }) | undefined
): Effect.Effect<unknown, RequestError> => {
  const request = (trace: OwnerProtocol.TraceContext | undefined) =>
    Effect.async<unknown, RequestError>((resume) => start(client, operation, args, options, trace, resume))
  return tracedWith(operation.span, { workerId: client.workerId, ...operation.attributes?.(args) }, request)
}

/** C12 @internal */
export const cancel = (client: Client, requestId: string): Effect.Effect<void, RequestNotPending | InvalidInput> =>
  Effect.suspend((): Effect.Effect<void, RequestNotPending | InvalidInput> => {
    const checked = Prepare.checkId(requestId, "requestId")
    if (Either.isLeft(checked)) return Effect.fail(checked.left)
    const pending = client.pending
    if (pending === undefined || pending.requestId !== requestId) {
      return Effect.fail(new RequestNotPending({ workerId: client.workerId, requestId }))
    }
    pending.unknown("cancelled")
    return Effect.void
  })
