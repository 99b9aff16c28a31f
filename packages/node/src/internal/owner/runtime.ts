import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as OwnerDirect from "@mcp-worker/core/internal/owner/owner"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "../job/start.js"
import { makeFactory } from "../transport/factory.js"
import * as RemoteProtocol from "../thread/protocol.js"
import * as Traced from "../shared/traced.js"
import * as Direct from "../thread/owner.js"
import * as Spans from "./spans.js"

/** @internal */
export interface OwnerDataPort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
  readonly close: () => void
}

/** `slot` only in a thread. @internal */
export const run = (port: OwnerDataPort, early: ProcessStart.StartedProcess | undefined, slot?: Direct.Slot): void => {
  const factory = makeFactory(early)
  // Decided once: no cost per message.
  const tracing = Traced.threadTracing()
  const spans = tracing === undefined ? undefined : Spans.makeSpans(tracing)
  // Untraced, the port's own method: no wrapper runs per message.
  const post: (message: OwnerProtocol.OwnerMessageEncoded) => void =
    spans === undefined
      ? port.postMessage.bind(port)
      : (message: OwnerProtocol.OwnerMessageEncoded) => port.postMessage(spans.posted(message))
  const direct = slot === undefined ? undefined : Direct.directPort(slot, post, spans)
  const owner = OwnerDirect.makeDirect({
    port: { post, ...direct?.hooks, spanOf: spans?.spanOf },
    factory: factory.make,
    callerGoneAfterMs: RemoteProtocol.remoteGoneAfterMs
  })
  const replies = direct?.replies
  const observed = direct?.observed
  const onMessage =
    spans === undefined
      ? owner.onMessage
      : (message: unknown) => {
          spans.received(message)
          owner.onMessage(message)
        }
  port.on("message", onMessage)
  let stopListening: (() => void) | undefined
  const stop = () => {
    stopListening?.()
    stopListening = undefined
  }

  const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
    Open: (request) => {
      spans?.opened(request.workerId)
      return replies === undefined
        ? owner.open(request)
        : Effect.tap(owner.open(request), () =>
            Effect.sync(() => {
              stopListening = Direct.listen(request.workerId, owner, replies, spans)
            })
          )
    },
    Close: ({ budgetMs }) =>
      Effect.suspend(() => {
        stop()
        return owner.close(budgetMs)
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            // C80
            observed?.flush()
            port.close()
          })
        )
      )
  })

  // Once the runner ended, nothing may keep this thread alive.
  Effect.runFork(
    WorkerRunner.launch(main).pipe(
      Effect.provide(NodeWorkerRunner.layer),
      Effect.ensuring(
        Effect.sync(() => {
          stop()
          observed?.flush()
          port.close()
          spans?.close()
          replies?.close()
          factory.discard()
        })
      ),
      Effect.orDie
    )
  )
}
