import * as Caller from "@mcp-worker/caller/Operations"
import type { Operation, RequestOptions, ResultSchema } from "../Operations.js"

/** @internal `@mcp-worker/caller`'s entry `name` with its span, span attributes and result schema (C104). */
export const fromCaller = <Args extends ReadonlyArray<unknown>, Options extends RequestOptions, A>(
  name: keyof Caller.Requests,
  result: ResultSchema<A>,
  attributes?: (args: Args) => Record<string, unknown>
): Operation<Args, Options, A> => ({
  ...(Caller.requests[name] as unknown as Caller.Operation<Args, Options>),
  method: Caller.requests[name].method,
  span: `McpWorkers.${name}`,
  ...(attributes === undefined ? {} : { attributes }),
  result
})
