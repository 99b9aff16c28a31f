// Bundles the owner-thread entry (and, for the test suite, the fixture servers) with esbuild.
// Worker threads do not go through any TypeScript loader, and one minified file boots far faster than
// the same graph of modules loaded one by one.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { pointIntoShippedSources, sourcesOf } from "./sourceMaps.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const alias = {
  "@mcp-worker/caller": path.join(root, "packages/caller/src/index.ts"),
  "@mcp-worker/core": path.join(root, "packages/core/src/index.ts"),
  "@mcp-worker/node": path.join(root, "packages/node/src/index.ts")
}

// Some CommonJS dependencies call `require` on Node built-ins; an ESM bundle needs a real `require`.
const banner = {
  js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
}

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  banner,
  logLevel: "warning",
  legalComments: "none",
  alias,
  plugins: [
    {
      name: "mcp-worker-subpaths",
      setup(build) {
        build.onResolve({ filter: /^@mcp-worker\/(caller|core|node)\/.+/ }, (args) => {
          const [, pkg, sub] = /^@mcp-worker\/(caller|core|node)\/(.+)$/.exec(args.path)
          return { path: path.join(root, "packages", pkg, "src", `${sub}.ts`) }
        })
      }
    }
  ]
}

// The SDK client's Node shims, whose Ajv provider it builds in its constructor, swapped for a shim that loads the
// provider on first use (scripts/shims/clientShims.mjs).
const lazyAjv = {
  name: "mcp-worker-lazy-ajv",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/client\/_shims$/ }, () => ({
      path: path.join(root, "scripts/shims/clientShims.mjs")
    }))
  }
}

// One zod 4 for the SDK and the tasks extension. npm nests zod 4 under @modelcontextprotocol/client, @modelcontextprotocol/core
// and @modelcontextprotocol/ext-tasks (the root's zod is 3.25, for the 1.x fixtures); bundled as it resolves, every
// owner would load and build zod once per copy (100 KB each). Each resolves to the client's copy while its own is the
// same version.
const clientDir = path.join(root, "node_modules/@modelcontextprotocol/client")
const zodVersionOf = (dir) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "node_modules/zod/package.json"), "utf8")).version
  } catch {
    return undefined
  }
}
const oneZod = {
  name: "mcp-worker-one-zod",
  setup(build) {
    const version = zodVersionOf(clientDir)
    if (version === undefined) return
    const same = ["core", "ext-tasks"]
      .filter((name) => zodVersionOf(path.join(root, "node_modules/@modelcontextprotocol", name)) === version)
      .map((name) => `${path.sep}@modelcontextprotocol${path.sep}${name}${path.sep}`)
    build.onResolve({ filter: /^zod(\/.*)?$/ }, (args) =>
      args.pluginData === oneZod || !same.some((dir) => args.importer.includes(dir))
        ? undefined
        : build.resolve(args.path, { resolveDir: clientDir, kind: args.kind, pluginData: oneZod })
    )
  }
}

// The owner never switches zod's locale: of zod's locales the runtime bundles English only. A `z` namespace used whole
// (as `@modelcontextprotocol/ext-tasks` uses it) would otherwise keep every one of them, about 400 KB.
const zodEnglishOnly = {
  name: "mcp-worker-zod-english-only",
  setup(build) {
    const zodFile = `${path.sep}zod${path.sep}v4${path.sep}`
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(zodFile)
        ? { path: path.join(path.dirname(args.importer), "../locales/en.js"), namespace: "zod-english" }
        : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "zod-english" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)}`,
      resolveDir: path.dirname(args.path)
    }))
  }
}

/**
 * The owner thread: a tiny CommonJS entry (Node built-ins only: it starts the server first) at
 * packages/node/owner/owner.cjs (owner-process.cjs for an owner process), and the minified CommonJS runtime it loads,
 * owner-runtime.cjs, each with a source map into the shipped sources. No V8 code cache ships: one is only valid for
 * the V8 that made it, so the first owner on each Node writes its own into the user's cache directory (C67).
 */
export const bundleOwner = async () => {
  const dir = path.join(root, "packages/node/owner")
  const owner = (entry, outfile, more = {}) =>
    esbuild.build({
      ...common,
      format: "cjs",
      banner: {},
      minify: true,
      sourcemap: true,
      // C67: positions and names for stack traces (`--enable-source-maps`), into the sources an install holds.
      sourcesContent: false,
      write: false,
      ...more,
      entryPoints: [path.join(root, "packages/node/src/internal/owner", entry)],
      outfile: path.join(dir, outfile)
    })
  const results = await Promise.all([
    // CommonJS: a thread (or process) whose entry is an ES module starts Node's ES module loader first.
    owner("threadMain.ts", "owner.cjs"),
    // The owner process (`isolation: "process"`): the same prelude, reading its init data from its data pipe.
    owner("processMain.ts", "owner-process.cjs"),
    owner("runtime.ts", "owner-runtime.cjs", { plugins: [...common.plugins, lazyAjv, oneZod, zodEnglishOnly] })
  ])
  fs.mkdirSync(dir, { recursive: true })
  const shipped = sourcesOf(path.join(root, "packages"), ["node", "core", "caller"])
  const outputs = results
    .flatMap((result) => result.outputFiles)
    .map((output) =>
      output.path.endsWith(".map")
        ? { path: output.path, contents: Buffer.from(pointIntoShippedSources(output.text, output.path, shipped)) }
        : output
    )
  writeChanged(outputs)
  // Code caches earlier builds wrote beside the runtime, and the ES module entries of earlier builds.
  for (const file of fs.readdirSync(dir)) {
    if (/^owner-runtime\..*cache$/.test(file) || /^owner(-process)?\.mjs$/.test(file)) fs.rmSync(path.join(dir, file))
  }
}

const sameAs = (file, contents) => {
  try {
    return fs.readFileSync(file).equals(contents)
  } catch {
    return false
  }
}

// A rebuild while owners run (a test packing the packages, a second build) must not show them a half-written file:
// outputs are written whole and renamed into place, and only when they changed.
const writeChanged = (outputFiles) => {
  for (const output of outputFiles)
    if (!sameAs(output.path, output.contents)) writeAtomically(output.path, output.contents)
}

const writeAtomically = (file, contents) => {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, contents)
  fs.renameSync(temporary, file)
}

/** Every `test/fixtures/*.server.ts` to test/fixtures/dist/<name>.mjs. */
export const bundleFixtures = () => {
  const dir = path.join(root, "test/fixtures")
  const entryPoints = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".server.ts"))
    .map((f) => ({ in: path.join(dir, f), out: f.replace(/\.server\.ts$/, "") }))
  return Promise.all([
    esbuild.build({
      ...common,
      entryPoints,
      outdir: path.join(dir, "dist"),
      outExtension: { ".js": ".mjs" },
      minify: true
    }),
    bundleClusterRunner()
  ])
}

// The cluster tests' runner process (test/cluster/runner-program.ts) as one file: through tsx, loading its module
// graph took seconds of each runner's start. The host finds the owner bundle relative to its own module, which in
// a bundle is this file, so those paths (the owner thread's and the owner process's) are made absolute.
const ownerEntryAbsolute = {
  name: "mcp-worker-owner-entry",
  setup(build) {
    build.onLoad({ filter: /internal[\\/]host[\\/]owner(Thread|Process)\.ts$/ }, (args) => ({
      contents: fs
        .readFileSync(args.path, "utf8")
        .replace(
          /new URL\("\.\.\/\.\.\/\.\.\/owner\/(owner(?:-process)?\.cjs)", import\.meta\.url\)/,
          (_, file) => `new URL(${JSON.stringify(pathToFileURL(path.join(root, "packages/node/owner", file)).href)})`
        ),
      loader: "ts"
    }))
  }
}

/**
 * A host program bundled into one ES module at `outfile` (anywhere): its owners start from this checkout's build.
 * `plugins` come after the ones every bundle needs.
 */
export const bundleHost = ({ plugins = [], ...options }) =>
  esbuild.build({
    ...common,
    ...options,
    plugins: [...common.plugins, ownerEntryAbsolute, ...plugins]
  })

const bundleClusterRunner = () =>
  bundleHost({
    alias: { ...alias, "@mcp-worker/cluster": path.join(root, "packages/cluster/src/index.ts") },
    entryPoints: [path.join(root, "test/cluster/runner-program.ts")],
    outfile: path.join(root, "test/fixtures/dist/cluster-runner.mjs"),
    // better-sqlite3 finds its native addon from its own module's path (`bindings`), so it stays in node_modules.
    external: ["pg-native", "better-sqlite3"]
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv.slice(2)
  const jobs = []
  if (what.length === 0 || what.includes("owner")) jobs.push(bundleOwner())
  if (what.includes("fixtures")) jobs.push(bundleFixtures())
  await Promise.all(jobs)
}
