/** C30: the first pull goes out as the iterator is made. @internal */
import { abandon, send, type Sent, type ThreadClient } from "./record.js"
import * as Protocol from "./protocol.js"
import { eventsIterator } from "../iterator.js"

/** Its first call subscribes. @internal */
export const puller = (client: ThreadClient, workerId: string, capacity: number): ((end: boolean) => Sent) => {
  const subscription = Protocol.randomId()
  // C30: a direct call's notification could reach the host before the subscription.
  client.routes.delete(workerId)
  return (end) =>
    send(client, { _tag: "RemoteEvents", workerId, subscription, capacity, ...(end ? { end: true } : {}) })
}

/** @internal */
export const subscribe = <A>(
  client: ThreadClient,
  workerId: string,
  capacity: number
): AsyncIterableIterator<A> & AsyncDisposable => {
  const pull = puller(client, workerId, capacity)
  let ahead: Sent | undefined = pull(false)
  // A refusal is the first read's failure, not an unhandled rejection.
  ahead.answer.catch(() => {})
  let buffered: Array<A> = []
  let done = false
  let finished = false

  const finish = async (): Promise<IteratorResult<A>> => {
    if (!finished) {
      finished = true
      buffered = []
      if (ahead !== undefined) abandon(client, ahead)
      ahead = undefined
      // Done only once the host has forgotten the subscription.
      if (!done) await pull(true).answer.catch(() => {})
    }
    return { done: true, value: undefined }
  }

  const next = async (): Promise<IteratorResult<A>> => {
    while (!finished) {
      if (buffered.length > 0) return { done: false, value: buffered.shift()! }
      if (done) break
      const pulling: Sent = ahead ?? pull(false)
      ahead = pulling
      let batch: Protocol.EventsBatch<A>
      try {
        batch = (await pulling.answer) as Protocol.EventsBatch<A>
      } catch (error) {
        ahead = undefined
        done = true
        await finish()
        throw error
      }
      ahead = undefined
      buffered = batch.items.slice()
      done = batch.done
    }
    await finish()
    return { done: true, value: undefined }
  }

  return eventsIterator(next, finish)
}
