// The API reference of @mcp-worker/core, node and cluster, written the way the Effect packages write theirs:
// @effect/docgen over each package's public modules (its exports map says which), failing on an export without
// `@since` (and, checked here, without `@category`), and type-checking then loading every `@example`
// (scripts/docgen.mjs). Output: .docgen/<package>/docs/modules/*.md, ignored by git.
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { run, stage } from "./docgen.mjs"
import { missingTags } from "./publicApi.mjs"
import { packagesDir, root } from "./sourceFiles.mjs"

const packages = ["core", "node", "cluster"]

const staged = packages.map((name) => stage(path.join(packagesDir, name), path.join(root, ".docgen", name)))
const untagged = missingTags(staged.flatMap(({ files }) => files))
if (untagged.length > 0) {
  for (const line of untagged) console.error(path.relative(root, line))
  process.exit(1)
}

// the builds the examples import (up to date after `npm run typecheck`, so then only checked)
const tsc = path.join(root, "node_modules", ".bin", "tsc")
const build = spawnSync(tsc, ["-b", ...packages.map((name) => path.join(packagesDir, name))], { stdio: "inherit" })
if (build.status !== 0) process.exit(1)

// side by side; each output is printed whole when it ends
let failed = false
for (const { name, output, checked, problem, seconds } of await Promise.all(staged.map(run))) {
  process.stdout.write(output)
  if (problem !== undefined) console.error(`${name}: ${problem}`)
  else console.log(`${name}: ${checked} examples compiled and loaded, ${seconds.toFixed(1)} s`)
  failed ||= problem !== undefined
}
if (failed) process.exit(1)
