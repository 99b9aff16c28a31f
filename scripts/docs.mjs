// The API reference of @mcp-worker/core, node and cluster, written the way the Effect packages write theirs:
// @effect/docgen over each package's public modules (its exports map says which), failing on an export without
// `@since` (and, checked here, without `@category`), and type-checking then running every `@example` against the
// sources. Output: .docgen/<package>/docs/modules/*.md, ignored by git.
//
// docgen reads `name` and `homepage` from the package.json of its working directory and rewrites an example's
// imports of that package to `../../src`, so each package runs in a staging directory of its own: a package.json,
// a docgen.json derived here, and `src` linked to the package's sources.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { missingTags, publicModules } from "./publicApi.mjs"
import { packagesDir, root } from "./sourceFiles.mjs"

const packages = ["core", "node", "cluster"]
const outRoot = path.join(root, ".docgen")

const readTsconfig = (file) => {
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile)
  if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"))
  return config
}

// The examples are checked as strictly as the sources (tsconfig.base.json), with the workspace's own paths
// (tsconfig.json) made absolute, since docgen writes the examples' tsconfig two levels below the staging dir.
const examplesCompilerOptions = () => {
  const base = readTsconfig(path.join(root, "tsconfig.base.json")).compilerOptions
  const { paths } = readTsconfig(path.join(root, "tsconfig.json")).compilerOptions
  return {
    ...base,
    // docgen's rewritten imports (`../../src/McpWorkers`) carry no extension: Bundler resolution takes them.
    module: "ESNext",
    moduleResolution: "Bundler",
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    // an example may name a value only to show its type
    noUnusedLocals: false,
    paths: Object.fromEntries(
      Object.entries(paths).map(([alias, targets]) => [alias, targets.map((target) => path.join(root, target))])
    )
  }
}

const stage = (name) => {
  const packageDir = path.join(packagesDir, name)
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"))
  const modules = publicModules(packageDir)
  const dir = path.join(outRoot, name)
  fs.mkdirSync(dir, { recursive: true })
  const homepage = manifest.homepage ?? manifest.repository?.url ?? "https://www.npmjs.com/package/" + manifest.name
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: manifest.name, homepage, type: "module" }))
  fs.writeFileSync(
    path.join(dir, "docgen.json"),
    JSON.stringify(
      {
        srcDir: "src",
        outDir: "docs",
        exclude: modules.private.map((module) => `src/${module}`),
        enforceVersion: true,
        parseCompilerOptions: { ...examplesCompilerOptions(), paths: {} },
        examplesCompilerOptions: examplesCompilerOptions()
      },
      null,
      2
    )
  )
  // the link of an earlier run; never recursive, so a real directory there is an error, not a deletion
  fs.rmSync(path.join(dir, "src"), { force: true })
  fs.symlinkSync(path.join(packageDir, "src"), path.join(dir, "src"), "dir")
  return { dir, files: modules.public.map((module) => path.join(packageDir, "src", module)) }
}

const staged = packages.map(stage)
const untagged = missingTags(staged.flatMap(({ files }) => files))
if (untagged.length > 0) {
  for (const line of untagged) console.error(path.relative(root, line))
  process.exit(1)
}

const bin = path.join(root, "node_modules", ".bin")
for (const [index, { dir }] of staged.entries()) {
  const started = Date.now()
  const run = spawnSync(path.join(bin, "docgen"), [], {
    cwd: dir,
    stdio: "inherit",
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }
  })
  if (run.status !== 0) {
    console.error(`docgen failed for @mcp-worker/${packages[index]} (exit ${run.status ?? run.signal})`)
    process.exit(1)
  }
  console.log(`@mcp-worker/${packages[index]}: ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
