// The cluster suite on SQLite, the storage of several processes on one machine: one file that every runner and the
// client-only test process open (WAL, busy timeout). It runs the SIGKILL and restart test, the storage's own
// failure (a process killed with the file open and its row left behind, then replaced by a new process on the same
// address); the partition test, which is the runner transport's, runs on Postgres.
import { clusterSuite } from "./clusterSuite.js"
import { sqliteFile, sqliteLoadable } from "./sqlite.js"

const loadable = sqliteLoadable()

clusterSuite(
  {
    name: "SQLite",
    skip: loadable.ok ? undefined : `${loadable.reason} (scripts/sqlite-bindings.sh builds it)`,
    start: async () => {
      const { file, remove } = sqliteFile()
      return { storage: { kind: "sqlite", target: file }, stop: remove }
    }
  },
  ["restart"]
)
