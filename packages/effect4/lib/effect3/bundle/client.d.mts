// The types of client.mjs, the in-thread client of McpClient bundled by scripts/bundle.mjs: @mcp-worker/node's
// `withClient`, and `handlersOf`, which turns Promise handlers into the implementation's own.
import type { Handler, RequestName, Timeout } from "./implementation.mjs"

/** Handlers as `makePromiseHost` takes them, or as the implementation's own (for `withClient`). */
export interface Handlers {
  readonly elicitation?: Handler | undefined
  readonly sampling?: Handler | undefined
  readonly roots?: Handler | undefined
}

/** An opaque value: the implementation's own handlers, only ever passed back to it. */
export type ImplementationHandlers = { readonly "~implementation": unique symbol }

/** @mcp-worker/node/PromiseHost handlersOf: Promise handlers as the implementation's own. */
export declare const handlersOf: (handlers: Handlers | undefined) => ImplementationHandlers | undefined

/** The connection `withClient` hands its callback: the requests without an id, its status and cancel. */
export type ScopedClient = {
  readonly [K in RequestName]: (...rest: ReadonlyArray<unknown>) => Promise<unknown>
} & {
  readonly workerId: string
  readonly status: () => Promise<unknown>
  readonly cancel: (requestId: string) => Promise<void>
}

/** @mcp-worker/node/PromiseClient withClient: one connection in this thread for as long as `f` runs. */
export declare const withClient: <A>(
  config: unknown,
  f: (client: ScopedClient) => Promise<A>,
  options?: {
    readonly timeout?: Timeout | undefined
    readonly requestTimeout?: Timeout | undefined
    readonly closeTimeout?: Timeout | undefined
    readonly maxResultBytes?: number | undefined
    readonly handlers?: ImplementationHandlers | undefined
    readonly tools?: unknown
  }
) => Promise<A>
