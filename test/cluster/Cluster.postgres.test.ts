// The cluster suite on Postgres, the storage of a deployment across machines, on a private server of its own. It
// runs the partition test: a partition is the runner transport's (a proxy stops forwarding between runners while
// every runner still reaches the storage), so one storage tells all there is; the SIGKILL and restart test, which
// is the storage's (a killed process's row left behind, then replaced), runs on SQLite, as the heavier file.
import { clusterSuite } from "./clusterSuite.js"
import { postgresAvailable, startPostgres } from "./postgres.js"

// A machine without Postgres (a fresh clone on a laptop) skips these, saying so; CI installs it and requires them
// (`MCPW_REQUIRE_POSTGRES=1` in .ci/run), so there they fail instead of skipping.
const required = process.env.MCPW_REQUIRE_POSTGRES === "1"

clusterSuite(
  {
    name: "Postgres",
    skip:
      required || postgresAvailable()
        ? undefined
        : "no Postgres binaries (initdb, pg_ctl); scripts/postgres.sh installs them",
    start: async () => {
      const pg = await startPostgres()
      return { storage: { kind: "postgres", target: pg.url }, stop: pg.stop }
    }
  },
  ["partition"]
)
