/**
 * The owner runtime: one Owner (MCP SDK client) served through the platform Worker runner (control plane) and
 * the dedicated data port. Loaded by the owner thread's entry after it started the server process.
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Owner from "@mcp-worker/core/Owner"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "./processStart.js"
import { makeFactory } from "./transportFactory.js"

/** The owner's end of its data plane: a `MessagePort` in a thread, a `LinePort` in a process. @internal */
export interface DataPort {
  readonly postMessage: (message: unknown) => void
  readonly on: (event: "message", listener: (message: any) => void) => unknown
  readonly close: () => void
}

/** @internal */
export const run = (port: DataPort, early: ProcessStart.StartedProcess | undefined): void => {
  const factory = makeFactory(early)
  const owner = Owner.make({ port: { post: (message) => port.postMessage(message) }, factory: factory.make })
  port.on("message", owner.onMessage)

  const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
    Open: (request) => owner.open(request),
    Close: ({ budgetMs }) => owner.close(budgetMs).pipe(Effect.ensuring(Effect.sync(() => port.close())))
  })

  // When the host ends the runner, nothing of this thread may keep its event loop alive.
  Effect.runFork(
    WorkerRunner.launch(main).pipe(
      Effect.provide(NodeWorkerRunner.layer),
      Effect.ensuring(
        Effect.sync(() => {
          port.close()
          factory.discard()
        })
      ),
      Effect.orDie
    )
  )
}
