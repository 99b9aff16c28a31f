// The runners' message storage: it stores nothing, as `MessageStorage.layerNoop` does (no call is persisted, C37),
// but it is not that layer's value. `@effect/cluster` (0.60) keeps the id of every request its entities answered, and
// forgets them only in its storage read loop, which `Sharding` runs only when its storage is not
// `MessageStorage.noop` (compared by identity). With the noop itself a runner keeps every id it ever answered; with
// this one the loop runs every `entityMessagePollInterval`, reads no messages, and forgets them. What repeats those
// ids would have refused, the runner's own record refuses (C89). Both internals are checked by the test
// "C89: the cluster forgets the ids it answered …": it fails if either changes.
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Layer from "effect/Layer"

export const layer: Layer.Layer<MessageStorage.MessageStorage> = Layer.effect(
  MessageStorage.MessageStorage,
  MessageStorage.make(MessageStorage.noop)
)
