/**
 * Loads the owner runtime (one minified CommonJS file) through `vm.Script` with V8's code cache: compiling
 * the ~550 KB bundle is a third of an owner thread's start-up, and the cache removes most of it. Node
 * built-ins only: this runs before anything else in the thread.
 *
 * A cache is only valid for the V8 that made it and for the flags it ran with (`--max-old-space-size`, `--expose-gc`
 * or any other V8 flag makes V8 reject it), so there is one file per V8 version, architecture and flag set: Node
 * versions sharing one installed package, and processes started with other flags (an owner process with a heap
 * limit), each keep theirs instead of rewriting one another's.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"

const wrap = (source: string) => `(function (exports, require, module, __filename, __dirname) {${source}\n})`

/**
 * The code cache of the runtime at `file` for this thread's V8 and the flags it runs with: `owner-runtime.cjs` →
 * `owner-runtime.v8-<version>-<arch>-<tag>.cache`, where `<tag>` is V8's own check value for caches
 * (`v8.cachedDataVersionTag()`: its version, its flags and the CPU's features). scripts/bundle.mjs names the one it
 * builds the same way.
 *
 * @internal
 */
export const cacheFileOf = (file: string): string =>
  file.replace(/\.cjs$/, `.v8-${process.versions.v8}-${process.arch}-${v8.cachedDataVersionTag().toString(36)}.cache`)

/**
 * Compiles and runs the runtime at `file`, using this V8's code cache beside it when V8 accepts it.
 * Returns the runtime's exports, whether the cache was used (`cached`), and `refresh` to write a missing or
 * rejected cache once the runtime has run (functions compiled while running are then in it too).
 *
 * @internal
 */
export const load = <A>(
  file: string
): { readonly exports: A; readonly cached: boolean; readonly refresh: () => void } => {
  const cacheFile = cacheFileOf(file)
  const source = fs.readFileSync(file, "utf8")
  let cachedData: Buffer | undefined
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    // no cache yet: compile from source
  }
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData !== undefined ? { cachedData } : {}) })
  const module = { exports: {} as A }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
  const stale = cachedData === undefined || script.cachedDataRejected === true
  return {
    exports: module.exports,
    cached: !stale,
    refresh: () => {
      if (!stale) return
      // Best effort, atomic: many owners may start at once, and the package directory may be read-only.
      const temporary = `${cacheFile}.${process.pid}.${Math.random().toString(36).slice(2)}`
      fs.writeFile(temporary, script.createCachedData(), (error) => {
        if (error) return
        fs.rename(temporary, cacheFile, (renameError) => {
          if (renameError) fs.rm(temporary, () => {})
        })
      })
    }
  }
}
