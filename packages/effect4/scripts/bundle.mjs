// Bundles the Effect 3 implementation privately into this package, so an Effect 4 application needs no effect 3:
// the Promise host and the Promise client of @mcp-worker/node (with effect 3, @effect/platform and the MCP SDK) into
// lib/effect3/bundle/implementation.mjs, `withClient` (McpClient's in-thread client) into lib/effect3/bundle/client.mjs, and the
// owner thread's files into owner/. The implementation finds its owner where @mcp-worker/node does, at ../../owner/
// from its own file.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundleOwner } from "../../../scripts/bundle.mjs"
import { rewriteMapFile, sourcesOf } from "../../../scripts/sourceMaps.mjs"

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const root = path.resolve(here, "../..")

// The host and the remote client; and the in-thread client of McpClient.
const entries = {
  implementation: [
    'export { makePromiseHost } from "@mcp-worker/node/PromiseHost"',
    'export { makePromiseClient } from "@mcp-worker/node/PromiseClient"'
  ].join("\n"),
  client: [
    'export { handlersOf } from "@mcp-worker/node/PromiseHost"',
    'export { withClient } from "@mcp-worker/node/PromiseClient"'
  ].join("\n")
}

// The sources of @mcp-worker/core and node the bundles are made of, which no install of this package holds beside it:
// copied to lib/effect3/src/<package>/, where the bundles' source maps point.
const sources = path.join(here, "lib/effect3/src")
const shipped = (absolute) => {
  const inRepository = sourcesOf(path.join(root, "packages"), ["caller", "core", "node"])(absolute)
  if (inRepository === undefined) return undefined
  const copy = path.join(
    sources,
    path.relative(path.join(root, "packages"), inRepository).replace(/[\\/]src(?=[\\/])/, "")
  )
  fs.mkdirSync(path.dirname(copy), { recursive: true })
  fs.copyFileSync(inRepository, copy)
  return copy
}

/**
 * Copies the owner bundle of @mcp-worker/node (built by the root's `bundleOwner`; no code cache ships, C67), and
 * bundles the implementation; every source map points into lib/effect3/src.
 */
export const bundleImplementation = async () => {
  const owner = path.join(here, "owner")
  const ownerBuild = path.join(root, "packages/node/owner")
  fs.rmSync(owner, { recursive: true, force: true })
  fs.rmSync(sources, { recursive: true, force: true })
  fs.cpSync(ownerBuild, owner, { recursive: true })
  for (const map of fs.readdirSync(owner).filter((file) => file.endsWith(".map")))
    rewriteMapFile(path.join(owner, map), shipped, ownerBuild)
  const outdir = path.join(here, "lib/effect3/bundle")
  // Earlier builds' chunks; the hand-written declarations stay.
  for (const file of fs.readdirSync(outdir)) if (/\.mjs(\.map)?$/.test(file)) fs.rmSync(path.join(outdir, file))
  // Two bundles, not one split in chunks: a chunk shared by both would carry the in-thread client (the SDK client and
  // its validator) into every host and remote thread, which never use it.
  const build = (entry) =>
    esbuild.build({
      entryPoints: { [entry]: `entry:${entry}` },
      outdir,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      minify: true,
      sourcemap: true,
      // Positions and names for stack traces (`--enable-source-maps`), into the sources this package ships.
      sourcesContent: false,
      legalComments: "none",
      logLevel: "warning",
      // Some CommonJS dependencies call `require` on Node built-ins; an ESM bundle needs a real `require`.
      banner: {
        js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
      },
      plugins: [
        {
          name: "mcp-worker-entries",
          setup(build) {
            build.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice(6), namespace: "entry" }))
            build.onLoad({ filter: /.*/, namespace: "entry" }, (args) => ({
              contents: entries[args.path],
              resolveDir: root,
              loader: "ts"
            }))
          }
        },
        {
          name: "mcp-worker-sources",
          setup(build) {
            build.onResolve({ filter: /^@mcp-worker\/(caller|core|node)(\/.+)?$/ }, (args) => {
              const [, pkg, sub] = /^@mcp-worker\/(caller|core|node)(?:\/(.+))?$/.exec(args.path)
              return { path: path.join(root, "packages", pkg, "src", `${sub ?? "index"}.ts`) }
            })
          }
        }
      ]
    })
  await Promise.all([build("implementation"), build("client")])
  for (const entry of ["implementation", "client"]) rewriteMapFile(path.join(outdir, `${entry}.mjs.map`), shipped)
  const bytesOf = (entry) => fs.statSync(path.join(outdir, `${entry}.mjs`)).size
  return { host: bytesOf("implementation"), client: bytesOf("client") }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleOwner()
  const { host, client } = await bundleImplementation()
  const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`
  console.log(
    `lib/effect3/bundle: implementation.mjs (host, remote) ${kib(host)}, client.mjs (McpClient) ${kib(client)}`
  )
}
