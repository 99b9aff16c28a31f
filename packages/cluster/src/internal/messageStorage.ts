// C37. Not `MessageStorage.noop` itself: with the noop (by identity) `Sharding` never forgets answered ids (C89).
import * as MessageStorage from "@effect/cluster/MessageStorage"
import * as Layer from "effect/Layer"

export const layer: Layer.Layer<MessageStorage.MessageStorage> = Layer.effect(
  MessageStorage.MessageStorage,
  MessageStorage.make(MessageStorage.noop)
)
