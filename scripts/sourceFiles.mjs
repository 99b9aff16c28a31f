// The TypeScript sources of packages/*/src, as the repository's own checks read them (import-cycles.mjs, sizes.mjs).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const packagesDir = path.join(root, "packages")

const sourceFiles = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(full)
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []
  })

export const files = fs
  .readdirSync(packagesDir)
  .map((name) => path.join(packagesDir, name, "src"))
  .filter((dir) => fs.existsSync(dir))
  .flatMap(sourceFiles)
