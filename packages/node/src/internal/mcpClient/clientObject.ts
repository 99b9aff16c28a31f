/** @internal */
import type { InvalidInput, OpenFailed } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { McpClient, Options, Requests } from "../../McpClient.js"
import * as internal from "./record.js"
import * as Request from "./request.js"

type RunOptions = Operations.RequestOptions & { readonly signal?: AbortSignal | undefined }

// Fixed parameters for the arity: no rest array per call.
const bound = (record: internal.Client, operation: Operations.Any) => {
  switch (operation.arity) {
    case 0:
      return (options?: RunOptions) => Request.run(record, operation, [], options)
    case 1:
      return (a: unknown, options?: RunOptions) => Request.run(record, operation, [a], options)
    default:
      return (a: unknown, b: unknown, options?: RunOptions) => Request.run(record, operation, [a, b], options)
  }
}

/** @internal */
export const fromRecord = (record: internal.Client): McpClient => {
  const requests = Object.fromEntries(
    Object.entries(Operations.requests).map(([name, operation]) => [name, bound(record, operation)])
  ) as unknown as Requests
  return {
    ...requests,
    workerId: record.workerId,
    status: Effect.sync(() => internal.statusOf(record)),
    cancel: (requestId) => Request.cancel(record, requestId),
    close: (options) =>
      Effect.suspend(() => {
        const budget = internal.closeBudgetOf(options?.timeout)
        return internal.close(record, budget)
      })
  }
}

/** @internal */
export const make = (
  config: ServerConfigInput,
  options?: Options
): Effect.Effect<McpClient, OpenFailed | InvalidInput, Scope.Scope> =>
  Effect.map(internal.make(config, options), fromRecord)

/** @internal */
export const withClient = <A, E, R>(
  config: ServerConfigInput,
  f: (client: McpClient) => Effect.Effect<A, E, R>,
  options?: Options
): Effect.Effect<A, E | OpenFailed | InvalidInput, Exclude<R, Scope.Scope>> =>
  Effect.scoped(Effect.flatMap(make(config, options), f))
