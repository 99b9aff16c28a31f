// Stores nothing (C37), but is not `MessageStorage.noop` itself: with the noop (compared by identity) `Sharding` never
// runs its read loop, the only place `@effect/cluster` forgets answered request ids. Repeats are refused by the
// runner's own record (C89); the test "C89: the cluster forgets the ids it answered …" fails if either internal changes.
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Layer from "effect/Layer"

export const layer: Layer.Layer<MessageStorage.MessageStorage> = Layer.effect(
  MessageStorage.MessageStorage,
  MessageStorage.make(MessageStorage.noop)
)
