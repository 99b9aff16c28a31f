// Bundles the Effect 3 implementation privately into this package, so an Effect 4 application needs no effect 3:
// the Promise host, the Promise client and `withClient` of @mcp-worker/node (with effect 3, @effect/platform and the MCP SDK)
// into lib/effect3/implementation.mjs, and the owner thread's files into owner/. The implementation finds its owner
// where @mcp-worker/node does, at ../../owner/ from its own file.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundleOwner } from "../../../scripts/bundle.mjs"

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const root = path.resolve(here, "../..")

/** Copies the owner bundle of @mcp-worker/node (built by the root's `bundleOwner`) and bundles the implementation. */
export const bundleImplementation = async () => {
  const owner = path.join(here, "owner")
  fs.rmSync(owner, { recursive: true, force: true })
  fs.cpSync(path.join(root, "packages/node/owner"), owner, { recursive: true })
  const outfile = path.join(here, "lib/effect3/implementation.mjs")
  await esbuild.build({
    stdin: {
      contents: [
        'export { handlersOf, makePromiseHost } from "@mcp-worker/node/PromiseHost"',
        'export { makePromiseClient, withClient } from "@mcp-worker/node/PromiseClient"'
      ].join("\n"),
      resolveDir: root,
      sourcefile: "implementation.ts",
      loader: "ts"
    },
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    // Some CommonJS dependencies call `require` on Node built-ins; an ESM bundle needs a real `require`.
    banner: {
      js: 'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'
    },
    plugins: [
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
  return { bytes: fs.statSync(outfile).size }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleOwner()
  const { bytes } = await bundleImplementation()
  console.log(`lib/effect3/implementation.mjs: ${(bytes / 1024).toFixed(0)} KiB`)
}
