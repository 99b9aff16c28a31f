/**
 * A remote subscribes by pulling: it holds at most one batch, the host at most `capacity` per subscriber.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import * as CallerClient from "@mcp-worker/caller/Client"
import { eitherOf, type InvalidInput, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { Registry } from "./registry.js"
import * as ServerRequests from "./serverRequests.js"
import * as Connection from "../shared/connection.js"
import * as Metrics from "../metrics/metrics.js"
import type { Entry } from "./entry.js"

const end: unique symbol = Symbol.for("@mcp-worker/node/events/end")

type Item = McpWorkers.ServerNotification | typeof end

/** @internal */
export interface Subscriber {
  readonly queue: Queue.Queue<Item>
  readonly capacity: number
}

/** @internal */
export interface Batch {
  readonly items: ReadonlyArray<McpWorkers.ServerNotification>
  readonly done: boolean
}

const maxBatch = 64

/** @internal */
export const capacityOf = (options: McpWorkers.EventsOptions | undefined): Either.Either<number, InvalidInput> =>
  eitherOf(CallerClient.capacityOf(options))

// `unsafeOffer` bypasses the sliding strategy and would refuse the newest.
const offer = (entry: Entry, subscriber: Subscriber, item: Item) => {
  if (Option.getOrElse(subscriber.queue.unsafeSize(), () => 0) < subscriber.capacity) {
    subscriber.queue.unsafeOffer(item)
    return
  }
  entry.notifications.dropped++
  if (entry.metrics) Metrics.notificationDropped(Metrics.serverOf(entry))
  Effect.runSync(Queue.offer(subscriber.queue, item))
}

/** @internal */
export const publish = (entry: Entry, message: typeof OwnerProtocol.NotificationMessage.Type): void => {
  entry.notifications.received++
  const list = ServerRequests.listOf(message.method)
  if (list !== undefined) entry.notifications.listChanged[list] = new Date().toISOString()
  if (entry.subscribers.size === 0) return
  const params = JsonValue.decodeUnsafe(message.params)
  const notification: McpWorkers.ServerNotification = {
    method: message.method,
    params: JsonValue.isJsonObject(params) ? params : {}
  }
  for (const subscriber of entry.subscribers) offer(entry, subscriber, notification)
}

/** @internal */
export const endAll = (entry: Entry): void => {
  for (const subscriber of entry.subscribers) offer(entry, subscriber, end)
  entry.subscribers.clear()
}

const subscribe = (entry: Entry, capacity: number): Subscriber => {
  const subscriber: Subscriber = { queue: Effect.runSync(Queue.sliding<Item>(capacity)), capacity }
  if (Connection.isEnded(entry.life)) subscriber.queue.unsafeOffer(end)
  else entry.subscribers.add(subscriber)
  return subscriber
}

const unsubscribe = (entry: Entry, subscriber: Subscriber): void => {
  entry.subscribers.delete(subscriber)
}

const lookup = (registry: Registry, id: string): Effect.Effect<Entry, UnknownWorker> => {
  const entry = registry.entries.get(id)
  return entry === undefined ? Effect.fail(new UnknownWorker({ workerId: id })) : Effect.succeed(entry)
}

const isNotification = (item: Item): item is McpWorkers.ServerNotification => item !== end

/** @internal */
export const events = (
  registry: Registry,
  id: string,
  options: McpWorkers.EventsOptions | undefined
): Stream.Stream<McpWorkers.ServerNotification, UnknownWorker | InvalidInput> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const capacity = yield* capacityOf(options)
      const entry = yield* lookup(registry, id)
      const subscriber = yield* Effect.acquireRelease(
        Effect.sync(() => subscribe(entry, capacity)),
        (subscriber) => Effect.sync(() => unsubscribe(entry, subscriber))
      )
      return Stream.fromQueue(subscriber.queue).pipe(Stream.takeWhile(isNotification))
    })
  )

/** The remote's stream stopped or went silent. @internal */
export const pull = (
  registry: Registry,
  id: string,
  subscription: string,
  capacity: number,
  endIt: boolean
): Effect.Effect<Batch, UnknownWorker | InvalidInput> =>
  Effect.gen(function* () {
    const known = registry.remoteSubscriptions.get(subscription)
    if (endIt) {
      if (known !== undefined) forget(registry, subscription, known)
      return { items: [], done: true }
    }
    let current = known
    if (current === undefined) {
      const checked = yield* capacityOf({ capacity })
      const entry = yield* lookup(registry, id)
      current = { entry, subscriber: subscribe(entry, checked) }
      registry.remoteSubscriptions.set(subscription, current)
    }
    const { subscriber } = current
    const taken = yield* Queue.takeBetween(subscriber.queue, 1, Math.min(maxBatch, subscriber.capacity)).pipe(
      Effect.onInterrupt(() => Effect.sync(() => forget(registry, subscription, current)))
    )
    const items = Chunk.toReadonlyArray(taken)
    const done = items.length > 0 && !isNotification(items[items.length - 1]!)
    if (done) forget(registry, subscription, current)
    return { items: items.filter(isNotification), done }
  })

const forget = (registry: Registry, subscription: string, known: RemoteSubscription) => {
  registry.remoteSubscriptions.delete(subscription)
  unsubscribe(known.entry, known.subscriber)
}

/** @internal */
export interface RemoteSubscription {
  readonly entry: Entry
  readonly subscriber: Subscriber
}
