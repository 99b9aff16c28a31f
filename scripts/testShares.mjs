// What `npm test` runs that does not depend on the Node version it runs on: the static checks, and suites of pure
// logic, protocol logic over a real server (OAuth, tasks), the cluster on its databases, packing and installing, the
// README, the docs, the examples. What can differ between Nodes (threads, processes, sockets, the process job, code
// caches) is in every other suite. They come in shares of about equal time, so that CI runs each once, one share per
// Node, beside what every Node runs (.ci/run). `MCPW_NODE_INDEPENDENT`: unset or `all`, every share (a developer's
// `npm test`); `none`, no share; `1` to `3`, that share.

/** Each share: its npm scripts of static checks, and its vitest suites (globs). */
export const nodeIndependent = [
  {
    checks: ["typecheck", "lint"],
    // Shares 1 and 2 load better-sqlite3 (the cluster's SQLite tests; the README's cluster program): CI builds its
    // addon for their Nodes only.
    suites: ["test/cluster/**", "test/core/**"]
  },
  {
    checks: ["imports", "sizes"],
    suites: [
      "test/install/**",
      "test/node/HttpAuth.test.ts",
      "test/node/Pack.test.ts",
      "test/node/Tasks.test.ts",
      "test/node/Tasks2026.test.ts"
    ]
  },
  {
    checks: ["docs", "contract-index"],
    suites: [
      // The caller's parity and wire suites, and its sandboxes under Deno and Bun (the Node sandbox among them runs
      // the same socket client every Node's listener suites run).
      "test/caller/ErrorParity.test.ts",
      "test/caller/Operations.test.ts",
      "test/caller/Plane.test.ts",
      "test/caller/ThreadProtocol.test.ts",
      "test/caller/socketWire.test.ts",
      "test/caller/socketSandbox.test.ts",
      "test/fixtures/**",
      "test/scripts/**",
      "test/node/Demo.test.ts",
      "test/node/Everything.test.ts",
      "test/node/LongCall.test.ts",
      "test/node/ObservabilityExample.test.ts",
      // Both conformance runners' server scenarios against the gateway: the protocol, whatever Node serves it.
      "test/node/ServeConformance.test.ts",
      "test/node/TasksExample.test.ts"
    ]
  }
]

/** The shares (1-based) `setting` selects; a setting that names none of them is an error naming what it must be. */
export const sharesOf = (setting) => {
  const all = nodeIndependent.map((_, i) => i + 1)
  if (setting === undefined || setting === "" || setting === "all") return all
  if (setting === "none") return []
  const share = Number(setting)
  if (all.includes(share)) return [share]
  throw new Error(`MCPW_NODE_INDEPENDENT must be all, none or 1 to ${all.length}, not ${JSON.stringify(setting)}`)
}
