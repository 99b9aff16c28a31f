import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"
// @ts-expect-error plain ESM module without types
import { nodeIndependent, sharesOf } from "./scripts/testShares.mjs"

const root = path.dirname(fileURLToPath(import.meta.url))

// The Node-independent suites of the shares MCPW_NODE_INDEPENDENT selects (scripts/testShares.mjs).
const shares: ReadonlyArray<number> = sharesOf(process.env.MCPW_NODE_INDEPENDENT)

// The `ps` path is chosen when the process job's modules load (C100).
const ownModules = ["test/node/ProcessPaths.test.ts"]

const excluded = [
  ...configDefaults.exclude,
  ...nodeIndependent.flatMap((share: { suites: ReadonlyArray<string> }, i: number) =>
    shares.includes(i + 1) ? [] : share.suites
  )
]

// Files that spend most of their time waiting (a call past the SDK's minute, a cluster's runners, fresh threads,
// installs), started first. Without durations from an earlier run (a clean clone, as in CI) vitest starts the larger
// files first, and these small ones would end the run alone.
const waitingFirst = [
  "test/node/LongCall.test.ts",
  "test/cluster/",
  "test/node/Remote.test.ts",
  "test/node/Tasks.test.ts",
  "test/install/",
  "test/node/AbortThenCall.test.ts"
]

class WaitingFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const rank = (file: TestSpecification) => {
      const at = waitingFirst.findIndex((prefix) => path.relative(root, file.moduleId).startsWith(prefix))
      return at === -1 ? waitingFirst.length : at
    }
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@mcp-worker\/(core|node|cluster|caller)$/, replacement: path.join(root, "packages/$1/src/index.ts") },
      { find: /^@mcp-worker\/(core|node|cluster|caller)\/(.+)$/, replacement: path.join(root, "packages/$1/src/$2.ts") }
    ]
  },
  test: {
    // Each project names its files (an `extends` project adds its `include` to this one).
    include: [],
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    sequence: { sequencer: WaitingFirst },
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
