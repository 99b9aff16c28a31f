/**
 * Grants: a worker handed to code in another process (a sandbox) with narrower rights. A grant is an opaque string,
 * plain data that travels as an environment variable, a file or an argument; over a listener
 * (`NodeMcpWorkers.layerListen`) it names its worker for exactly the operations it allows, until it expires, is
 * revoked, or its worker closes. An unknown, expired, revoked or forged grant is `UnknownWorker`, like an unknown id.
 *
 * ```ts
 * const grants = yield* McpGrants.McpGrants
 * const grant = yield* grants.grant(id, { tools: ["search"], ttl: "10 minutes" })
 * // spawn the sandbox with MCP_SOCKET=<path> MCP_GRANT=<grant>
 * ```
 *
 * @since 0.1.0
 */
import type { InvalidInput, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as Operations from "@mcp-worker/core/Operations"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/listen/grants.js"

/**
 * An operation a grant may allow: a request of the operation table by its name (`callTool`, `listTools`…), `status`,
 * `cancel`, `events`, or `close`.
 *
 * @since 0.1.0
 * @category models
 */
export type GrantOperation = keyof Operations.Requests | "status" | "cancel" | "events" | "close"

/**
 * What a grant allows.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrantOptions {
  /** The operations allowed. Default: every request, `status`, `cancel` and `events`; never `close` unless named. */
  readonly operations?: ReadonlyArray<GrantOperation> | undefined
  /**
   * The tools a `callTool` may name (another is `InvalidInput` at `name`, not sent), and the only ones `listTools`
   * shows. Default: every tool.
   */
  readonly tools?: ReadonlyArray<string> | undefined
  /**
   * An absolute directory of the host's file system under which a `callTool` of this grant may write its result
   * (`saveTo`, which the owner writes with the host's rights). Default: no `saveTo` at all (`InvalidInput`, not sent).
   */
  readonly saveDir?: string | undefined
  /** How long the grant holds. Default: until it is revoked or its worker closes. */
  readonly ttl?: Duration.DurationInput | undefined
}

/**
 * The grants of the host's workers.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpGrantsService {
  /** A new grant naming the open worker `id` (a worker id, not a grant) with the rights of `options`. */
  readonly grant: (id: string, options?: GrantOptions) => Effect.Effect<string, UnknownWorker | InvalidInput>
  /** Ends a grant at once; its requests in flight and open `events` subscriptions run on. `UnknownWorker` if it names no live grant. */
  readonly revoke: (grant: string) => Effect.Effect<void, UnknownWorker>
}

/**
 * What a grant allows without `operations`: every request of the operation table, `status`, `cancel` and `events`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOperations: ReadonlyArray<GrantOperation> = internal.defaultOperations

export {
  /**
   * The service tag, provided by `NodeMcpWorkers.layerListen`.
   *
   * @since 0.1.0
   * @category tags
   */
  McpGrants
} from "./internal/listen/grants.js"
