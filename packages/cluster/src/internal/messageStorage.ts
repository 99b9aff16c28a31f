// C37. Not `MessageStorage.noop` itself: with the noop (by identity) `Sharding` never runs the loop that forgets
// answered ids. Test "C89: the cluster forgets the ids it answered …" guards both internals.
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Layer from "effect/Layer"

export const layer: Layer.Layer<MessageStorage.MessageStorage> = Layer.effect(
  MessageStorage.MessageStorage,
  MessageStorage.make(MessageStorage.noop)
)
