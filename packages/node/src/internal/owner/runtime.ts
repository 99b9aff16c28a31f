/**
 * The owner runtime: one Owner (MCP SDK client) served through the platform Worker runner (control plane) and
 * the dedicated data port. Loaded by the owner thread's entry after it started the server process.
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as OwnerDirect from "@mcp-worker/core/internal/owner/direct"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "../job/start.js"
import { makeFactory } from "../transport/factory.js"
import * as RemoteProtocol from "../thread/protocol.js"
import * as Traced from "../shared/traced.js"
import * as Direct from "../thread/owner.js"
import * as Spans from "./spans.js"

/** The owner's end of its data plane: a `MessagePort` in a thread, a `LinePort` in a process. @internal */
export interface OwnerDataPort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
  readonly close: () => void
}

/**
 * Runs the owner on its data port. `slot`: this is an owner thread, which can post to other threads' channels and so
 * takes and answers remote callers' requests itself, recording the one in flight there for the host; an owner
 * process cannot.
 *
 * @internal
 */
export const run = (
  port: OwnerDataPort,
  early: ProcessStart.StartedProcess | undefined,
  slot?: RemoteProtocol.Slot
): void => {
  const factory = makeFactory(early)
  // Decided once: an owner without a tracer handles every message as if tracing did not exist.
  const tracing = Traced.threadTracing()
  const spans = tracing === undefined ? undefined : Spans.makeSpans(tracing)
  const post =
    spans === undefined
      ? (message: OwnerProtocol.OwnerMessageEncoded) => port.postMessage(message)
      : (message: OwnerProtocol.OwnerMessageEncoded) => port.postMessage(spans.posted(message))
  const direct = slot === undefined ? undefined : Direct.directPort(slot, post, spans)
  const owner = OwnerDirect.make({
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
  // Remote callers reach an owner thread directly once its connection is ready; not once it closes.
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
            // What it counted of the requests it answered itself goes to the host before the port closes (C80).
            observed?.flush()
            port.close()
          })
        )
      )
  })

  // When the host ends the runner, nothing of this thread may keep its event loop alive.
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
