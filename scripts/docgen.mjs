// One package through @effect/docgen: staged, run, and its verdict, including what docgen does not check itself.
//
// docgen reads `name` and `homepage` from the package.json of its working directory and rewrites an example's
// imports of that package to `../../src`, so each package runs in a staging directory of its own: a package.json,
// a docgen.json derived here, `source` linked to the package's sources (what docgen documents) and `src` to its
// build (what the examples import). An example thus sees each package as an application does: the built modules,
// the other packages through their exports maps, at the sources' strictness; and compiling declarations instead
// of every source body keeps the run short.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { exampleCount, publicModules } from "./publicApi.mjs"
import { root } from "./sourceFiles.mjs"

const bin = path.join(root, "node_modules", ".bin")

const readTsconfig = (file) => {
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile)
  if (error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"))
  return config
}

// The examples are checked as strictly as the sources (tsconfig.base.json).
const examplesCompilerOptions = () => ({
  ...readTsconfig(path.join(root, "tsconfig.base.json")).compilerOptions,
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
})

/**
 * Stages the package at `packageDir` in `dir` (inside the repository, where `node_modules` is found) and answers
 * what `run` needs: the package's name, the staging dir, and its public source files.
 */
export const stage = (packageDir, dir) => {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"))
  const modules = publicModules(packageDir)
  fs.mkdirSync(dir, { recursive: true })
  const homepage = manifest.homepage ?? manifest.repository?.url ?? `https://www.npmjs.com/package/${manifest.name}`
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: manifest.name, homepage, type: "module" }))
  const config = {
    srcDir: "source",
    outDir: "docs",
    exclude: modules.private.map((module) => `source/${module}`),
    enforceVersion: true,
    parseCompilerOptions: examplesCompilerOptions(),
    examplesCompilerOptions: examplesCompilerOptions()
  }
  fs.writeFileSync(path.join(dir, "docgen.json"), JSON.stringify(config, null, 2))
  for (const [link, target] of [
    ["source", "src"],
    ["src", "dist"]
  ]) {
    // the link of an earlier run; never recursive, so a real directory there is an error, not a deletion
    fs.rmSync(path.join(dir, link), { force: true })
    fs.symlinkSync(path.join(packageDir, target), path.join(dir, link), "dir")
  }
  return { name: manifest.name, dir, files: modules.public.map((module) => path.join(packageDir, "src", module)) }
}

/**
 * Runs docgen in a staged package and judges it: `problem` is undefined when docgen succeeded and compiled every
 * `@example` of the public modules (docgen 0.5.2 skips one on a class itself, a property or a re-export).
 */
export const run = ({ name, dir, files }) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(path.join(bin, "docgen"), [], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, "")
      const checked = Number(/(\d+) example\(s\) found/.exec(plain)?.[1] ?? 0)
      const written = exampleCount(files)
      const problem =
        code !== 0
          ? `docgen failed (exit ${code})`
          : checked !== written
            ? `docgen compiled ${checked} of the ${written} @example tags: one on a class itself, a property or a ` +
              "re-export is shown but never compiled; move it to the module comment or to a function or constant"
            : undefined
      resolve({ name, output: plain, checked, problem, seconds: (Date.now() - started) / 1000 })
    })
  })
