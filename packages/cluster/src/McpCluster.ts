/**
 * mcp-worker across the processes of an `@effect/cluster` cluster. Every process that builds `layer` gets the same
 * `McpWorkers` service: a worker is opened and owned by the runner where `open` was called (today's registry and
 * owner thread), and its id reaches it from every runner and every client-only process of the cluster.
 *
 * A runner serves one shard group of its own, new at every process start, and the worker id carries it. A shard
 * never moves to another process, a live connection is never re-created elsewhere, and no call is persisted or
 * replayed: a runner that died takes its workers (and their server trees) with it, and its ids are gone.
 *
 * @since 0.1.0
 */
import type * as SocketServer from "@effect/platform/SocketServer"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import type { McpWorkers } from "@mcp-worker/core/McpWorkers"
import type * as NodeMcpWorkers from "@mcp-worker/node/NodeMcpWorkers"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import * as internal from "./internal/cluster.js"
import * as facade from "./internal/facade.js"

/**
 * Where this runner is reached by the others, and where it listens if that differs (behind NAT, or the tests'
 * proxy).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions {
  readonly host: string
  readonly port: number
  readonly listenHost?: string | undefined
  readonly listenPort?: number | undefined
}

/**
 * Options of a process of the cluster.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** This process as a runner that owns workers; without it, a client-only process (it opens nothing). */
  readonly runner?: RunnerOptions | undefined
  /** The options of this runner's own registry. */
  readonly host?: NodeMcpWorkers.Options | undefined
  /**
   * The budget of a request to another runner without a `timeout` of its own, and of a `status` or `cancel` there
   * (default 30 s). One that got no answer by then may have arrived: it is `DeliveryUnknown`.
   */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** The budget of a `close` on another runner (default 5 s, plus 1 s for the answer to travel). */
  readonly closeTimeout?: Duration.DurationInput | undefined
  /** How long a runner that stopped beating stays listed (default 20 s): after it, its ids are known gone. */
  readonly runnerExpiration?: Duration.DurationInput | undefined
  /** How often the runner list is read again (default 1 s). */
  readonly refreshInterval?: Duration.DurationInput | undefined
  /** How long a runner waits for its own shard before its layer fails (default 30 s). */
  readonly readyTimeout?: Duration.DurationInput | undefined
  /** The prefix of the runner storage tables (default `mcp_worker`). */
  readonly tablePrefix?: string | undefined
  /** The runner transport's encoding (default msgpack). */
  readonly serialization?: "msgpack" | "ndjson" | undefined
}

/**
 * This process's place in the cluster: its shard group (new at every start) and its runner address (`null` for a
 * client-only process).
 *
 * @since 0.1.0
 * @category models
 */
export interface Runner {
  readonly group: string
  readonly address: string | null
}

/**
 * The tag of this process's `Runner`.
 *
 * @since 0.1.0
 * @category tags
 */
export const McpCluster: Context.Tag<facade.SelfRunner, Runner> = facade.SelfRunner

/**
 * The cluster's `McpWorkers` on this process, and its `McpCluster` place. Needs a `SqlClient` for the runner
 * storage (Postgres with `@effect/sql-pg` across machines; on one machine, `SqliteStorage.layer`, the default there).
 *
 * @example
 * ```ts
 * import { McpCluster } from "@mcp-worker/cluster"
 * import * as SqliteStorage from "@mcp-worker/cluster/SqliteStorage"
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { Effect, Layer } from "effect"
 *
 * // A runner on one machine: every process of the cluster opens the same storage file
 * const RunnerLive = McpCluster.layer({ runner: { host: "127.0.0.1", port: 34431 } }).pipe(
 *   Layer.provide(SqliteStorage.layer({ filename: "/var/lib/app/cluster.db" }))
 * )
 *
 * // A client-only process (no `runner`): it opens nothing, and reaches every runner's workers by id
 * export const ClientLive = McpCluster.layer({}).pipe(
 *   Layer.provide(SqliteStorage.layer({ filename: "/var/lib/app/cluster.db" }))
 * )
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   const self = yield* McpCluster.McpCluster
 *   // opened and owned here; the id carries this runner's shard group, so it never moves
 *   const id = yield* workers.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *   const { runner } = yield* workers.status(id) // { address: "127.0.0.1:34431", group: self.group }
 *   return { id, runner, self }
 * })
 *
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(RunnerLive)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (
  options: Options
) => Layer.Layer<
  McpWorkers | facade.SelfRunner,
  SocketServer.SocketServerError | SqlError.SqlError,
  SqlClient.SqlClient
> = internal.layer
