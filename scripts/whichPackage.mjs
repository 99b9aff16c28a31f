// README's which-package table, generated from the packages' exports maps and modules (test/scripts/Readme.test.ts
// fails when README's copy differs): `node scripts/whichPackage.mjs` writes it between its two markers.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { importTable } from "./publicApi.mjs"

/** The published packages, in the table's order. */
export const packages = ["caller", "core", "node", "cluster", "effect4"]

const markers = /(<!-- which-package:start -->\n)[\s\S]*?(\n<!-- which-package:end -->)/

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  const readme = path.join(root, "README.md")
  const table = importTable(root, packages)
  fs.writeFileSync(
    readme,
    fs.readFileSync(readme, "utf8").replace(markers, (_, start, end) => start + table + end)
  )
}
