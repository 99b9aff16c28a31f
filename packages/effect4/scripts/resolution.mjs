// An esbuild plugin for Effect 4 programs of this repository that live outside this workspace (examples/effect4,
// bench/effect4): `effect` and `@mcp-worker/effect4` resolve in this workspace (the root's `effect` is Effect 3),
// and the private implementation stays external, loaded from its own file as the package loads it, so that it
// finds its owner files next to it.
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const root = path.resolve(here, "../..")
const effect3Sources = [
  path.join(root, "packages/caller/src"),
  path.join(root, "packages/core/src"),
  path.join(root, "packages/node/src")
]

export const effect4Resolution = {
  name: "effect4-resolution",
  setup(build) {
    build.onResolve({ filter: /lib\/effect3\/[a-z]+\.mjs$/ }, (args) => ({
      path: path.resolve(args.resolveDir, args.path),
      external: true
    }))
    build.onResolve({ filter: /^@mcp-worker\/effect4(\/.+)?$/ }, (args) => {
      const sub = args.path.slice("@mcp-worker/effect4".length + 1)
      return { path: path.join(here, "src", `${sub === "" ? "index" : sub}.ts`) }
    })
    // Effect 4 for every importer but the Effect 3 sources and the root's own dependencies.
    build.onResolve({ filter: /^effect(\/.*)?$/ }, (args) => {
      const own = args.importer.includes(`${path.sep}node_modules${path.sep}`)
      if (own || args.pluginData === "effect4" || effect3Sources.some((dir) => args.importer.startsWith(dir))) {
        return undefined
      }
      return build.resolve(args.path, { resolveDir: here, kind: args.kind, pluginData: "effect4" })
    })
  }
}
