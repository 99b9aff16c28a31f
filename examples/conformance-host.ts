// The host and gateway the server scenarios run against. The host has handlers of elicitation and sampling, so its
// workers' clients declare both and the fixture's tools may ask; the runner's client declares both as well, so the
// gateway puts each question to it (C151) and these handlers answer only a client that declared neither (C152).
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const handlers: NodeMcpWorkers.Handlers = {
  elicitation: () => Effect.succeed({ action: "decline" }),
  sampling: () => Effect.fail("this host has no model")
}

/** The gateway on 127.0.0.1, and its host with the handlers above. */
export const layer = McpServe.layerServe({ http: {} }).pipe(
  Layer.provideMerge(NodeMcpWorkers.layerWithView({ handlers }))
)
