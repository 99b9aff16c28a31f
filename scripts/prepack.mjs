// The part of `npm pack` (and `npm publish`) every package shares, run from the package's directory after its own
// build: the repository's LICENSE copied in, since npm packs only files inside the package, and the package's README
// made from the repository's (scripts/packageReadme.mjs).
import * as fs from "node:fs"
import * as path from "node:path"
import { root, writePackageReadme } from "./packageReadme.mjs"

fs.copyFileSync(path.join(root, "LICENSE"), path.join(process.cwd(), "LICENSE"))
writePackageReadme(process.cwd())
