/** The lean caller loads no Effect to reach a worker; what needs Effect loads on first use. @internal */
import * as Client from "@mcp-worker/caller/Client"
import { types } from "node:util"
import type { MakeOptions, PromiseClient, ScopedClient, WithClientOptions } from "../PromiseClient.js"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import { checkSavePath, checkSpillDirectory } from "./transport/resultPaths.js"

const effectSide = () => import("./promiseEffect.js")

const environment: Client.Environment = {
  context: { isProxy: (u: unknown) => types.isProxy(u), checkSavePath, checkSpillDirectory },
  prepareOpen: (config, options) => effectSide().then((effect) => effect.prepareOpen(config, options as any)),
  render: (tools, options) =>
    import("@mcp-worker/core/agentHost/ToolDeclarations").then((declarations) =>
      declarations.render(tools as any, { name: options?.name, namespace: options?.namespace, title: options?.title })
    )
}

/** @internal */
export const makePromiseClient = (options?: MakeOptions): PromiseClient => {
  const client = Client.make(options, environment) as unknown as PromiseClient
  return {
    ...client,
    openAll: (document, openAllOptions) =>
      effectSide().then((effect) => effect.openAll(client, document, openAllOptions)),
    closeAll: (workers, closeOptions) => effectSide().then((effect) => effect.closeAll(client, workers, closeOptions))
  }
}

/** @internal */
export const withClient = <A>(
  config: ServerConfigInput,
  f: (client: ScopedClient) => Promise<A>,
  options?: WithClientOptions
): Promise<A> => effectSide().then((effect) => effect.withClient(config, f, options))
