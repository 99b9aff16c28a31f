/** The thread plane as a `Plane`. @internal */
import type * as Plane from "../../Plane.js"
import { eventsIterator } from "../iterator.js"
import { deadlineOf } from "../../Operations.js"
import { subscribe } from "./events.js"
import { callOf, dispose, disposedError, make as makeClient, send, type ThreadClient } from "./record.js"

export { disposedError }

/** Nothing starts until the first call; idle, it never keeps the thread alive. @internal */
export const make = (): Plane.Plane => {
  let client: ThreadClient | undefined
  let disposed = false
  const use = <A>(f: (client: ThreadClient) => Promise<A>): Promise<A> =>
    disposed ? Promise.reject(disposedError("the mcp-worker client was disposed")) : f((client ??= makeClient()))

  const request = (call: Plane.Call): Promise<unknown> =>
    use(
      (client) =>
        send(client, callOf(call), { signal: call.signal, onProgress: call.onProgress, trace: call.trace }).answer
    )

  const open = ({ open, budgetMs }: Plane.PreparedOpen): Promise<string> =>
    use(
      (client) =>
        send(client, { _tag: "RemoteOpen", ...open, deadline: deadlineOf(budgetMs) }).answer as Promise<string>
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

/** @internal */
export const failedIterator = <A>(error: unknown): AsyncIterableIterator<A> & AsyncDisposable => {
  let failed = false
  return eventsIterator<A>(
    async () => {
      if (failed) return { done: true, value: undefined }
      failed = true
      throw error
    },
    async () => {
      failed = true
    }
  )
}
