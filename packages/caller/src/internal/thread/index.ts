/**
 * The thread plane as a `Plane`: one caller record, made on first use, for every operation of this client.
 *
 * @internal
 */
import { InvalidInput } from "../../McpWorkerError.js"
import type * as Plane from "../../Plane.js"
import { subscribe } from "./events.js"
import { callOf, dispose, disposedError, make as makeClient, send } from "./plane.js"
import type * as Protocol from "./protocol.js"
import type { ThreadClient } from "./record.js"

/**
 * An `open` as the host reads it: the config normalized in the calling thread (C18) in its wire form, the options
 * checked, and the budget; made by the surface that has the config checks (they need `@mcp-worker/core`).
 *
 * @internal
 */
export type PrepareOpen = (
  config: unknown,
  options: Plane.OpenOptions
) => Promise<{ readonly open: Omit<Protocol.RemoteOpen, "_tag" | "deadline">; readonly budgetMs: number | undefined }>

/** @internal */
export interface Options {
  readonly prepareOpen?: PrepareOpen | undefined
}

const deadlineOf = (budgetMs: number | undefined): number | undefined =>
  budgetMs === undefined ? undefined : Date.now() + budgetMs

/**
 * The thread plane of this process's host. Nothing starts until the first call; idle, it never keeps the thread
 * alive.
 *
 * @internal
 */
export const make = (options: Options = {}): Plane.Plane => {
  let client: ThreadClient | undefined
  let disposed = false
  const use = <A>(f: (client: ThreadClient) => Promise<A>): Promise<A> =>
    disposed ? Promise.reject(disposedError("the mcp-worker client was disposed")) : f((client ??= makeClient()))

  const request = (call: Plane.Call): Promise<unknown> =>
    use(
      (client) =>
        send(client, callOf(call), { signal: call.signal, onProgress: call.onProgress, trace: call.trace }).answer
    )

  const open = (config: unknown, openOptions: Plane.OpenOptions): Promise<string> =>
    options.prepareOpen === undefined
      ? Promise.reject(
          new InvalidInput({
            where: "config",
            path: "config",
            message:
              "open checks the config with @mcp-worker/core: use makePromiseClient of @mcp-worker/node, or open " +
              "the worker in the host",
            delivery: "not_sent"
          })
        )
      : options
          .prepareOpen(config, openOptions)
          .then(({ budgetMs, open }) =>
            use(
              (client) =>
                send(client, { _tag: "RemoteOpen", ...open, deadline: deadlineOf(budgetMs) }).answer as Promise<string>
            )
          )

  const events = (workerId: string, capacity: number) =>
    disposed
      ? failedIterator<Plane.ServerNotification>(disposedError("the mcp-worker client was disposed"))
      : subscribe<Plane.ServerNotification>((client ??= makeClient()), workerId, capacity)

  return {
    request,
    open,
    status: (workerId) =>
      use((client) => send(client, { _tag: "RemoteStatus", workerId }).answer as Promise<Plane.WorkerStatus>),
    cancel: (workerId, requestId) =>
      use((client) => send(client, { _tag: "RemoteCancel", workerId, requestId }).answer as Promise<void>),
    close: (workerId, budgetMs) =>
      use(
        (client) =>
          send(client, { _tag: "RemoteClose", workerId, deadline: deadlineOf(budgetMs) })
            .answer as Promise<Plane.WorkerStatus>
      ),
    events,
    dispose: async () => {
      disposed = true
      if (client !== undefined) dispose(client)
    }
  }
}

/** An iterator whose first read rejects with `error`. @internal */
export const failedIterator = <A>(error: unknown): AsyncIterableIterator<A> & AsyncDisposable => {
  let failed = false
  const iterator: AsyncIterableIterator<A> & AsyncDisposable = {
    next: async () => {
      if (failed) return { done: true, value: undefined }
      failed = true
      throw error
    },
    return: async () => {
      failed = true
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: async () => {
      failed = true
    }
  }
  return iterator
}
