// The part of `npm pack` (and `npm publish`) every package shares, run from the package's directory after its own
// build: the repository's LICENSE copied in, since npm packs only files inside the package.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
fs.copyFileSync(path.join(root, "LICENSE"), path.join(process.cwd(), "LICENSE"))
