// Whether this Node can load better-sqlite3's native addon, built for it by scripts/sqlite-bindings.sh (.ci/run runs
// it for every tested Node; here it runs for this Node when its build is missing). A Node that cannot load it skips
// the SQLite cluster tests with the reason, printed and in the suite's name; never silently.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export type Loadable = { readonly ok: true } | { readonly ok: false; readonly reason: string }

const addonPath = () =>
  path.join(
    root,
    "node_modules/better-sqlite3/compiled",
    process.versions.node,
    process.platform,
    process.arch,
    "better_sqlite3.node"
  )

const tryLoad = (): Loadable => {
  try {
    const Database = createRequire(path.join(root, "package.json"))("better-sqlite3")
    new Database(":memory:").prepare("select 1").get()
    return { ok: true }
  } catch (error) {
    return { ok: false, reason: String(error instanceof Error ? error.message : error).split("\n")[0]! }
  }
}

export const sqliteLoadable = (): Loadable => {
  // .ci/run built (or failed to build) every Node's addon before the tests, and says so: no second attempt here.
  if (!fs.existsSync(addonPath()) && process.env.MCPW_SQLITE_NO_BUILD !== "1") {
    try {
      // Minutes on a loaded machine, once per Node: the build is kept in node_modules and in a cache.
      execFileSync("bash", [path.join(root, "scripts/sqlite-bindings.sh"), path.dirname(process.execPath)], {
        cwd: root,
        stdio: ["ignore", "inherit", "inherit"],
        timeout: 15 * 60_000
      })
    } catch {
      // its own output says why; the load below says what is missing
    }
  }
  const loaded = tryLoad()
  return loaded.ok
    ? loaded
    : { ok: false, reason: `better-sqlite3 does not load on Node ${process.version}: ${loaded.reason}` }
}

/** A fresh directory for one test file's SQLite storage file (its WAL and shared-memory files sit next to it). */
export const sqliteFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-sqlite-"))
  return { file: path.join(dir, "cluster.db"), remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}
