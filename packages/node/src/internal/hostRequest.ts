/**
 * Requests from the host's side: the busy check and the request id (C8), the caller's whole budget (C9), the exact
 * cancel on timeout, interruption or `cancel` (C10–C12), and the plain-data check of arguments (C16).
 */
import {
  DeadlineExceeded,
  DeliveryUnknown,
  InvalidInput,
  RequestNotPending,
  type RequestError
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import type * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import { types } from "node:util"
import { budgetOf, invalidTimeout } from "./budget.js"
import { checkSavePath } from "./responseSave.js"
import { lookup, type Registry } from "./registry.js"
import { traced } from "./traced.js"
import { type Entry, refusal } from "./workerEntry.js"

const isProxy = (u: unknown) => types.isProxy(u)

// What the params builders get here, in the calling thread.
const context = { isProxy, checkSavePath }

/**
 * Posts the request and waits for its answer, its timeout or its caller's interruption. Runs in the register
 * callback of `Effect.async`, so the busy check and taking the slot are one synchronous step.
 */
const send = (
  entry: Entry,
  method: OwnerProtocol.Method,
  params: string,
  left: number,
  onProgress: ((progress: OwnerProtocol.Progress) => void) | undefined,
  saveTo: string | undefined,
  resume: (effect: Effect.Effect<unknown, RequestError>) => void
): Effect.Effect<void> => {
  const requestId = WorkerId.makeRequestId()
  let timer: ReturnType<typeof setTimeout> | undefined
  const cancel = (reason: "timeout" | "interrupted") => {
    if (entry.pending?.requestId !== requestId) return
    entry.pending = undefined
    entry.port.postMessage({ _tag: "Cancel", requestId, reason })
  }
  entry.pending = {
    requestId,
    complete: (exit) => {
      if (timer !== undefined) clearTimeout(timer)
      resume(exit as Exit.Exit<unknown, RequestError>)
    },
    onProgress
  }
  entry.port.postMessage({
    _tag: "Request",
    requestId,
    method,
    params,
    timeoutMs: left,
    ...(onProgress === undefined ? {} : { progress: true }),
    ...(saveTo === undefined ? {} : { saveTo })
  })
  timer = setTimeout(
    () => {
      cancel("timeout")
      resume(
        Exit.fail(new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "timeout", delivery: "unknown" }))
      )
    },
    Math.max(0, left)
  )
  return Effect.sync(() => {
    if (timer !== undefined) clearTimeout(timer)
    cancel("interrupted")
  })
}

/** One MCP request on a worker, within `timeout` counted from `started`. @internal */
export const request = (
  registry: Registry,
  id: string,
  method: OwnerProtocol.Method,
  params: string,
  timeout: Duration.DurationInput | undefined,
  started: number,
  onProgress?: ((progress: OwnerProtocol.Progress) => void) | undefined,
  saveTo?: string | undefined
): Effect.Effect<unknown, RequestError> =>
  Effect.suspend(() => {
    const budget = budgetOf(timeout)
    if (Either.isLeft(budget)) return Effect.fail(invalidTimeout("arguments", budget.left))
    // The busy check and taking the slot happen in one synchronous step (the register callback): a fiber may
    // yield between any two Effect steps, and two requests must never both pass the check (C8).
    return Effect.async<unknown, RequestError>((resume) => {
      const entry = registry.entries.get(id)
      const refused = refusal(id, entry)
      if (refused !== undefined || entry === undefined) return resume(Effect.fail(refused!))
      const left = (budget.right ?? entry.defaultTimeoutMs) - (Date.now() - started)
      // The deadline passed before the request could go (a remote caller's budget spent between threads, or a
      // zero budget): it is never sent (C22a).
      if (left <= 0)
        return resume(Effect.fail(new DeadlineExceeded({ workerId: entry.workerId, delivery: "not_sent" })))
      // The result is written where the server's bytes are read, which only the stdio transport does.
      if (saveTo !== undefined && entry.http)
        return resume(
          Effect.fail(
            new InvalidInput({
              where: "arguments",
              path: "options.saveTo",
              message: "saveTo is for stdio servers",
              delivery: "not_sent"
            })
          )
        )
      return send(entry, method, params, left, onProgress, saveTo, resume)
    })
  })

/**
 * Every request operation of the table, on the host's side: arguments checked and encoded here, then sent.
 *
 * @internal
 */
export const requests = (registry: Registry): Operations.Service<Operations.Requests> =>
  Operations.derive((operation, id, args, options) =>
    Effect.suspend(() => {
      const started = Date.now()
      return Either.match(
        Either.all([
          operation.params(args, options, context),
          operation.saveTo?.(options, context) ?? Either.right(undefined)
        ]),
        {
          onLeft: Effect.fail,
          onRight: ([params, saveTo]) =>
            request(registry, id, operation.method, params, options?.timeout, started, options?.onProgress, saveTo)
        }
      )
    }).pipe(traced(operation.span, { workerId: id, ...operation.attributes?.(args) }))
  )

/** Cancels exactly the request in flight named (C12). @internal */
export const cancel =
  (registry: Registry): McpWorkers.McpWorkersService["cancel"] =>
  (id, requestId) =>
    Effect.flatMap(lookup(registry, id), (entry) => {
      const pending = entry.pending
      if (pending === undefined || pending.requestId !== requestId) {
        return Effect.fail(new RequestNotPending({ workerId: entry.workerId, requestId }))
      }
      entry.pending = undefined
      entry.port.postMessage({ _tag: "Cancel", requestId, reason: "cancelled" })
      pending.complete(
        Exit.fail(
          new DeliveryUnknown({ workerId: entry.workerId, requestId, reason: "cancelled", delivery: "unknown" })
        )
      )
      return Effect.void
    })
