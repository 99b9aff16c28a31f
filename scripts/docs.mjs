// The API reference of @mcp-worker/core, node and cluster, written the way the Effect packages write theirs:
// @effect/docgen over each package's public modules (its exports map says which), failing on an export without
// `@since` (and, checked here, without `@category`), and type-checking then loading every `@example`. Output:
// .docgen/<package>/docs/modules/*.md, ignored by git.
//
// docgen reads `name` and `homepage` from the package.json of its working directory and rewrites an example's
// imports of that package to `../../src`, so each package runs in a staging directory of its own: a package.json,
// a docgen.json derived here, `source` linked to the package's sources (what docgen documents) and `src` to its
// build (what the examples import). An example thus sees each package as an application does: the built modules,
// the other packages through their exports maps, at the sources' strictness, and checking declarations instead
// of every source body keeps the run short.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { exampleCount, missingTags, publicModules } from "./publicApi.mjs"
import { packagesDir, root } from "./sourceFiles.mjs"

const packages = ["core", "node", "cluster"]
const outRoot = path.join(root, ".docgen")

const readTsconfig = (file) => {
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile)
  if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"))
  return config
}

// The examples are checked as strictly as the sources (tsconfig.base.json).
const examplesCompilerOptions = () => {
  const base = readTsconfig(path.join(root, "tsconfig.base.json")).compilerOptions
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
    noUnusedLocals: false
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
        srcDir: "source",
        outDir: "docs",
        exclude: modules.private.map((module) => `source/${module}`),
        enforceVersion: true,
        parseCompilerOptions: examplesCompilerOptions(),
        examplesCompilerOptions: examplesCompilerOptions()
      },
      null,
      2
    )
  )
  for (const [link, target] of [
    ["source", "src"],
    ["src", "dist"]
  ]) {
    // the link of an earlier run; never recursive, so a real directory there is an error, not a deletion
    fs.rmSync(path.join(dir, link), { force: true })
    fs.symlinkSync(path.join(packageDir, target), path.join(dir, link), "dir")
  }
  return { name, dir, files: modules.public.map((module) => path.join(packageDir, "src", module)) }
}

const staged = packages.map(stage)
const untagged = missingTags(staged.flatMap(({ files }) => files))
if (untagged.length > 0) {
  for (const line of untagged) console.error(path.relative(root, line))
  process.exit(1)
}

const bin = path.join(root, "node_modules", ".bin")
// the builds the examples import (up to date after `npm run typecheck`, so then only checked)
const build = spawnSync(path.join(bin, "tsc"), ["-b", ...packages.map((name) => path.join(packagesDir, name))], {
  stdio: "inherit"
})
if (build.status !== 0) process.exit(1)

// The packages run side by side, each output printed whole when it ends; what docgen counted is read from it.
const docgen = ({ name, dir }) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(path.join(bin, "docgen"), [], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code) => resolve({ name, code, output, seconds: (Date.now() - started) / 1000 }))
  })

let failed = false
for (const { name, code, output, seconds } of await Promise.all(staged.map(docgen))) {
  const { files } = staged.find((entry) => entry.name === name)
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "")
  const checked = Number(/(\d+) example\(s\) found/.exec(plain)?.[1] ?? 0)
  const written = exampleCount(files)
  process.stdout.write(output)
  if (code !== 0) {
    console.error(`docgen failed for @mcp-worker/${name} (exit ${code})`)
    failed = true
  } else if (checked !== written) {
    console.error(
      `@mcp-worker/${name}: docgen checked ${checked} of the ${written} @example tags: one on a class itself, a ` +
        "property or a re-export is shown but never compiled; move it to the module comment or to a function or constant"
    )
    failed = true
  } else {
    console.log(
      `@mcp-worker/${name}: ${files.length} modules, ${checked} examples checked and loaded, ${seconds.toFixed(1)} s`
    )
  }
}
if (failed) process.exit(1)
