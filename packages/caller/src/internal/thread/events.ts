/**
 * A worker's server notifications on the thread plane, as an async iterator over pulls (C30). The subscription's
 * first pull goes out in the call that makes the iterator, so the host has it before anything this thread asks
 * afterwards. Each pull takes one batch from the host, so this thread never holds more than that; leaving early
 * unsubscribes at the host.
 *
 * @internal
 */
import { abandon, send, type Sent, type ThreadClient } from "./record.js"
import * as Protocol from "./protocol.js"

/**
 * A new subscription's pull: each call asks the host for the next batch (`end`: forget the subscription). Its first
 * call subscribes.
 *
 * @internal
 */
export const puller = (client: ThreadClient, workerId: string, capacity: number): ((end: boolean) => Sent) => {
  const subscription = Protocol.randomId()
  // C30: a call sent straight to the owner could make a notification that reaches the host before this subscription
  // does; the next call goes through the host instead, behind the subscription, which gives the route again.
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
  // A refused subscription (an unknown worker) is the first read's failure, not an unhandled rejection.
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
      // Not ended by the host: this thread unsubscribes, and is done once the host has forgotten it.
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

  const iterator: AsyncIterableIterator<A> & AsyncDisposable = {
    next,
    return: finish,
    [Symbol.asyncIterator]: () => iterator,
    [Symbol.asyncDispose]: async () => {
      await finish()
    }
  }
  return iterator
}
