import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

/**
 * Suites whose outcome does not depend on the Node version they run on: pure logic, protocol logic over a real
 * server (OAuth, tasks), the cluster on its databases, packing and installing, the README, the docs, the examples.
 * What can differ between Nodes (threads, processes, sockets, the process job, code caches) is everywhere else.
 * CI runs these on one Node only: `MCPW_NODE_INDEPENDENT=0` leaves them out (see .ci/run).
 */
export const nodeIndependent = [
  "test/core/**",
  "test/cluster/**",
  "test/fixtures/**",
  "test/install/**",
  "test/scripts/**",
  "test/node/Demo.test.ts",
  "test/node/Everything.test.ts",
  "test/node/HttpAuth.test.ts",
  "test/node/LongCall.test.ts",
  "test/node/ObservabilityExample.test.ts",
  "test/node/Pack.test.ts",
  "test/node/Tasks.test.ts",
  "test/node/Tasks2026.test.ts",
  "test/node/TasksExample.test.ts"
]

// The `ps` path is chosen when the process job's modules load (C100).
const ownModules = ["test/node/ProcessPaths.test.ts"]

const excluded =
  process.env.MCPW_NODE_INDEPENDENT === "0" ? [...configDefaults.exclude, ...nodeIndependent] : configDefaults.exclude

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@mcp-worker\/(core|node|cluster)$/, replacement: path.join(root, "packages/$1/src/index.ts") },
      { find: /^@mcp-worker\/(core|node|cluster)\/(.+)$/, replacement: path.join(root, "packages/$1/src/$2.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    exclude:
      process.env.MCPW_NODE_INDEPENDENT === "0"
        ? [...configDefaults.exclude, ...nodeIndependent]
        : configDefaults.exclude,
    // Each project names its files (an `extends` project adds its `include` to this one).
    include: [],
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    // Each fork loads Effect and the library once for all its files instead of once per file: that load was a
    // fifth of the suite's CPU. Every file still gives back what it took (test/setup.ts). A file that sets what
    // the library reads once, when its modules load, runs in modules of its own.
    projects: [
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: [...excluded, ...ownModules], isolate: false }
      },
      { extends: true, test: { name: "own modules", include: ownModules, exclude: excluded, isolate: true } }
    ],
    // Two cores: real threads and real processes in every file; more parallel files only add noise.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 30_000
  }
})
