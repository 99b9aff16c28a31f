// The API reference of every package (caller, core, node, cluster and effect4), written the way the Effect packages write
// theirs: @effect/docgen over each package's public modules (its exports map says which), failing on an export
// without `@since` (and, checked here, without `@category`), and type-checking then loading every `@example`
// (scripts/docgen.mjs); then rendered as static HTML (scripts/docsHtml.mjs) into .docgen/html/, ignored by git:
// index.html links every package and module. Fails when a public module has no page or a link leads nowhere.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { generate } from "../packages/effect4/scripts/generate.mjs"
import { run, stage } from "./docgen.mjs"
import { problemsOf, writeReference } from "./docsHtml.mjs"
import { missingTags, publicModules } from "./publicApi.mjs"
import { packagesDir, root } from "./sourceFiles.mjs"

const packages = ["caller", "core", "node", "cluster", "effect4"]
const referenceDir = path.join(root, ".docgen", "html")

// Each staged where its examples resolve its own dependencies: effect4's inside its workspace, beside its Effect 4.
const stagingOf = (name) =>
  name === "effect4" ? path.join(packagesDir, name, ".docgen", name) : path.join(root, ".docgen", name)

// effect4's modules made from core's, as they are now.
generate()
const staged = packages.map((name) => stage(path.join(packagesDir, name), stagingOf(name)))
const untagged = missingTags(staged.flatMap(({ files }) => files))
if (untagged.length > 0) {
  for (const line of untagged) console.error(path.relative(root, line))
  process.exit(1)
}

// the builds the examples import (up to date after `npm run typecheck`, so then only checked); effect4 with its own
// TypeScript, as its workspace builds it
const tsc = (dir) => path.join(dir, "node_modules", ".bin", "tsc")
const effect4 = path.join(packagesDir, "effect4")
for (const [bin, projects] of [
  [tsc(root), ["caller", "core", "node", "cluster"].map((name) => path.join(packagesDir, name))],
  [tsc(effect4), [path.join(effect4, "tsconfig.src.json")]]
]) {
  const build = spawnSync(bin, ["-b", ...projects], { stdio: "inherit" })
  if (build.status !== 0) process.exit(1)
}

// side by side; each output is printed whole when it ends
let failed = false
for (const { name, output, checked, problem, seconds } of await Promise.all(staged.map(run))) {
  process.stdout.write(output)
  if (problem !== undefined) console.error(`${name}: ${problem}`)
  else console.log(`${name}: ${checked} examples compiled and loaded, ${seconds.toFixed(1)} s`)
  failed ||= problem !== undefined
}
if (failed) process.exit(1)

const manifestOf = (name) => JSON.parse(fs.readFileSync(path.join(packagesDir, name, "package.json"), "utf8"))
writeReference(
  packages.map((name) => ({
    name: manifestOf(name).name,
    description: manifestOf(name).description,
    modules: path.join(stagingOf(name), "docs", "modules")
  })),
  referenceDir
)
const problems = problemsOf(
  referenceDir,
  packages.map((name) => ({ short: name, modules: publicModules(path.join(packagesDir, name)).public }))
)
for (const problem of problems) console.error(`.docgen/html/${problem}`)
if (problems.length > 0) process.exit(1)
console.log(`API reference: ${path.relative(root, path.join(referenceDir, "index.html"))}`)
