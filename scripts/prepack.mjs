// The part of `npm pack` (and `npm publish`) every package shares, run from the package's directory after its own
// build: the repository's LICENSE copied in, since npm packs only files inside the package, and the package's README
// made from the repository's (scripts/packageReadme.mjs). `tsc -b` never removes what a deleted source once compiled
// to, so outputs without a source are removed here: a stale module must not ship.
import * as fs from "node:fs"
import * as path from "node:path"
import { root, writePackageReadme } from "./packageReadme.mjs"

fs.copyFileSync(path.join(root, "LICENSE"), path.join(process.cwd(), "LICENSE"))
writePackageReadme(process.cwd())

const dist = path.join(process.cwd(), "dist")
const source = (output) => output.replace(/(\.d)?\.(js|ts)(\.map)?$/, "")
for (const name of fs.existsSync(dist) ? fs.readdirSync(dist, { recursive: true, encoding: "utf8" }) : []) {
  const file = path.join(dist, name)
  if (!/\.(js|d\.ts)(\.map)?$/.test(name) || !fs.statSync(file).isFile()) continue
  const stem = path.join(process.cwd(), "src", source(name))
  if (![".ts", ".tsx", ".mts"].some((ext) => fs.existsSync(stem + ext))) fs.rmSync(file)
}
