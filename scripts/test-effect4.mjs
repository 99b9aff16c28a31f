// The Effect 4 workspace's part of `npm test`: packages/effect4 has its own dependencies (effect 4, vitest 5) and
// its own suite, which needs Node ≥ 22.19 (Effect 4's platform and vitest 5). On an older Node it says so and
// passes; scripts/node-runtimes.sh fetches a Node that runs it.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const workspace = path.join(root, "packages/effect4")
const [major, minor] = process.versions.node.split(".").map(Number)

if (major < 22 || (major === 22 && minor < 19)) {
  console.log(
    `effect4: SKIPPED on Node ${process.versions.node}: @mcp-worker/effect4's suite needs Node >= 22.19 ` +
      "(run it with a Node from scripts/node-runtimes.sh 22 or 24 first on PATH)"
  )
  process.exit(0)
}

const npm = (...args) => {
  const result = spawnSync("npm", args, { cwd: workspace, stdio: "inherit" })
  return result.status ?? 1
}

// A checkout installed before the workspace existed (the root's postinstall installs it).
if (!fs.existsSync(path.join(workspace, "node_modules/effect"))) {
  const status = npm("ci", "--ignore-scripts", "--no-audit", "--no-fund")
  if (status !== 0) process.exit(status)
}
console.log(`effect4: the @mcp-worker/effect4 suite on Node ${process.versions.node}`)
process.exit(npm("test"))
