// Bundles the Effect 3 implementation privately into this package, so an Effect 4 application needs no effect 3:
// the Promise host and the Promise client of @mcp-worker/node (with effect 3, @effect/platform and the MCP SDK) into
// lib/effect3/bundle/implementation.mjs, `withClient` (McpClient's in-thread client) into lib/effect3/bundle/client.mjs, and the
// owner thread's files into owner/. The implementation finds its owner where @mcp-worker/node does, at ../../owner/
// from its own file.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundleOwner, ownerCacheName } from "../../../scripts/bundle.mjs"

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

// The lowest Node this package's `engines` allows: a code cache the build makes on an older Node could never be used.
const lowestNode = () => {
  const { engines } = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"))
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(engines.node)
  if (match === null) throw new Error(`engines.node must read ">=major.minor": ${engines.node}`)
  return match.slice(1).map((part) => Number(part ?? 0))
}

const isAtLeast = (version, lowest) => {
  const parts = version.split(".").map(Number)
  for (let i = 0; i < 3; i++) if (parts[i] !== lowest[i]) return parts[i] > lowest[i]
  return true
}

/**
 * Copies the owner bundle of @mcp-worker/node (built by the root's `bundleOwner`), with the code cache of the Node
 * running this only when it is one this package runs on (the directory may hold other Nodes' too), and bundles the
 * implementation.
 */
export const bundleImplementation = async () => {
  const owner = path.join(here, "owner")
  const keepCache = isAtLeast(process.versions.node, lowestNode())
  fs.rmSync(owner, { recursive: true, force: true })
  fs.cpSync(path.join(root, "packages/node/owner"), owner, {
    recursive: true,
    filter: (source) => !source.endsWith(".cache") || (keepCache && path.basename(source) === ownerCacheName())
  })
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
      // Positions and names for stack traces (`--enable-source-maps`) at a sixth of the size: the sources are npm's.
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
            build.onResolve({ filter: /^@mcp-worker\/(core|node)(\/.+)?$/ }, (args) => {
              const [, pkg, sub] = /^@mcp-worker\/(core|node)(?:\/(.+))?$/.exec(args.path)
              return { path: path.join(root, "packages", pkg, "src", `${sub ?? "index"}.ts`) }
            })
          }
        }
      ]
    })
  await Promise.all([build("implementation"), build("client")])
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
