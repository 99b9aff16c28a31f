import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@mcp-worker\/(core|node|cluster)$/, replacement: path.join(root, "packages/$1/src/index.ts") },
      { find: /^@mcp-worker\/(core|node|cluster)\/(.+)$/, replacement: path.join(root, "packages/$1/src/$2.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    setupFiles: ["test/setup.ts"],
    pool: "forks",
    // Two cores: real threads and real processes in every file; more parallel files only add noise.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 30_000
  }
})
