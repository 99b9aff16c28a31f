/**
 * The runner storage of a cluster whose processes share one machine: one SQLite file that every runner and
 * client-only process opens (`@effect/sql-sqlite-node`, over `better-sqlite3`). It is the default for one machine;
 * a cluster across machines needs a server (Postgres with `@effect/sql-pg`).
 *
 * Several processes write the same file: WAL lets each read while another writes, and a busy timeout makes a
 * statement wait for another process's write instead of failing at once (`SQLITE_BUSY`).
 *
 * Import it from `@mcp-worker/cluster/SqliteStorage` (it is not in the package's index, so a Postgres deployment
 * needs neither `@effect/sql-sqlite-node` nor `better-sqlite3`'s native addon).
 *
 * @since 0.1.0
 */
import type * as Reactivity from "@effect/experimental/Reactivity"
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/**
 * Where the storage lives, and how long a process waits for another's write.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The database file: the same path for every process of the cluster. */
  readonly filename: string
  /** How long a statement waits for another process's write lock before `SQLITE_BUSY` (default 5 s). */
  readonly busyTimeout?: Duration.DurationInput | undefined
}

/**
 * The default busy timeout: a runner's heartbeat and shard-lock refresh write once a second, so a wait for another
 * process's write is short; 5 s rides out a loaded machine.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBusyTimeout: Duration.Duration = Duration.seconds(5)

/**
 * The optional peers SQLite storage loads, each with the range `@mcp-worker/cluster` names for it: installed only by
 * those who use this module (C68).
 *
 * @since 0.1.0
 * @category constants
 */
export const optionalPeers = {
  sqlite: "@effect/sql-sqlite-node@^0.53.0",
  experimental: "@effect/experimental@^0.61.1"
} as const

// C68: a missing optional peer fails with the command that installs it, not with ERR_MODULE_NOT_FOUND.
const loadPeer = <A>(peer: string, load: () => Promise<A>): Effect.Effect<A, SqlError> =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new SqlError({
        cause,
        message:
          (cause as { code?: unknown } | undefined)?.code === "ERR_MODULE_NOT_FOUND"
            ? `SqliteStorage needs ${peer}, an optional peer of @mcp-worker/cluster that is not installed: npm install ${peer}`
            : `SqliteStorage could not load ${peer}: ${String(cause)}`
      })
  })

const walRetryMs = 10

const isBusy = (error: SqlError): boolean =>
  typeof error.cause === "object" && error.cause !== null && (error.cause as { code?: unknown }).code === "SQLITE_BUSY"

/**
 * A `SqlClient` on the file, in WAL mode with the busy timeout set. A missing or unloadable native addon (one built
 * for another Node), or a missing optional peer, is a `SqlError` that says so, not a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const Sqlite: typeof SqliteClient = yield* loadPeer(
      optionalPeers.sqlite,
      () => import("@effect/sql-sqlite-node/SqliteClient")
    )
    // WAL is switched on here, not by the client: its switch runs before any busy timeout is set.
    const client = yield* Sqlite.make({ filename: options.filename, disableWAL: true }).pipe(
      // better-sqlite3 throws from its constructor when its addon cannot load for this Node.
      Effect.catchAllDefect((cause) =>
        Effect.fail(
          new SqlError({
            cause,
            message: `SQLite could not open ${options.filename} on Node ${process.version}: ${String(cause)}`
          })
        )
      )
    )
    const busyMs = Math.max(
      0,
      Math.round(Duration.toMillis(Duration.decode(options.busyTimeout ?? defaultBusyTimeout)))
    )
    yield* client.unsafe(`PRAGMA busy_timeout = ${busyMs}`)
    const rows = yield* client.unsafe<{ journal_mode: string }>("PRAGMA journal_mode = WAL").pipe(
      // Two processes switching a fresh file to WAL at once deadlock; SQLite fails one of them at once with
      // SQLITE_BUSY instead of calling its busy handler, so that one tries again within the busy timeout.
      Effect.retry({
        while: isBusy,
        schedule: Schedule.spaced(Duration.millis(walRetryMs)).pipe(
          Schedule.upTo(Duration.millis(Math.max(busyMs, walRetryMs)))
        )
      })
    )
    if (rows[0]?.journal_mode !== "wal") {
      // A file system without shared memory (a network mount) cannot hold a WAL, and then several processes
      // would lock each other out: refuse instead.
      return yield* new SqlError({
        cause: rows,
        message: `SQLite ${options.filename} is not in WAL mode (journal_mode: ${rows[0]?.journal_mode})`
      })
    }
    return client
  }).pipe(Effect.withSpan("SqliteStorage.make"))

/**
 * The runner storage for `McpCluster.layer` on one machine:
 * `McpCluster.layer(options).pipe(Layer.provide(SqliteStorage.layer({ filename })))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.unwrapEffect(
    Effect.map(
      loadPeer(optionalPeers.experimental, (): Promise<typeof Reactivity> => import("@effect/experimental/Reactivity")),
      (ReactivityModule) => Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(ReactivityModule.layer))
    )
  )
