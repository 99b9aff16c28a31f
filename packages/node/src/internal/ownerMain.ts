/**
 * The entry of an owner thread. Bundled (scripts/bundle.mjs) into one minified file: thread start-up is
 * dominated by module loading.
 */
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Owner from "@mcp-worker/core/Owner"
import * as OwnerProtocol from "@mcp-worker/core/OwnerProtocol"
import * as Effect from "effect/Effect"
import type { MessagePort } from "node:worker_threads"
import { workerData } from "node:worker_threads"
import { factory } from "./transportFactory.js"

const port: MessagePort = (workerData as { port: MessagePort }).port

const owner = Owner.make({
  port: { post: (message) => port.postMessage(message) },
  factory
})
port.on("message", owner.onMessage)

const main = WorkerRunner.layerSerialized(OwnerProtocol.ControlRequest, {
  Open: (request) => owner.open(request),
  Close: ({ budgetMs }) => owner.close(budgetMs).pipe(Effect.ensuring(Effect.sync(() => port.close())))
})

// When the host ends the runner, nothing of this thread may keep its event loop alive.
Effect.runFork(
  WorkerRunner.launch(main).pipe(
    Effect.provide(NodeWorkerRunner.layer),
    Effect.ensuring(Effect.sync(() => port.close())),
    Effect.orDie
  )
)
