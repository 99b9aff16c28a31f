// The runner storages the cluster tests run against: a `SqlClient` layer from a target string (a Postgres url, or
// the SQLite file every process of the test opens).
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqliteStorage from "../../packages/cluster/src/SqliteStorage.js"

export type StorageKind = "postgres" | "sqlite"

export const sqlLayer = (kind: StorageKind, target: string): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  kind === "postgres"
    ? Layer.map(PgClient.layer({ url: Redacted.make(target), maxConnections: 4, idleTimeout: "10 seconds" }), (c) => c)
    : SqliteStorage.layer({ filename: target })
