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
 * The code cache an owner writes once it has served (`warm`): the one the build makes holds only what loading the
 * runtime compiles, while an open and its first requests compile the client's connect and request paths as well,
 * lazily, in every thread. Loaded first when it is there.
 *
 * @internal
 */
export const warmCacheFileOf = (file: string): string => cacheFileOf(file).replace(/\.cache$/, ".warm.cache")

/** How long an owner runs before it writes the warm cache: past its open and first requests. @internal */
export const warmAfterMs = 2_000

const readIfThere = (file: string): Buffer | undefined => {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

// Best effort, atomic: many owners may start at once, and the package directory may be read-only.
const writeAtomically = (target: string, data: Buffer): void => {
  const temporary = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}`
  fs.writeFile(temporary, data, (error) => {
    if (error) return
    fs.rename(temporary, target, (renameError) => {
      if (renameError) fs.rm(temporary, () => {})
    })
  })
}

/**
 * Compiles and runs the runtime at `file`, using this V8's code cache beside it when V8 accepts it (the warm one
 * first). Returns the runtime's exports, whether a cache was used (`cached`), `refresh` to write a missing or
 * rejected cache once the runtime has run (functions compiled while running are then in it too), and `warm` to write
 * the warm cache once the owner has served, unless it was loaded from one.
 *
 * @internal
 */
export const load = <A>(
  file: string
): {
  readonly exports: A
  readonly cached: boolean
  readonly refresh: () => void
  readonly warm: () => void
} => {
  const cacheFile = cacheFileOf(file)
  const warmFile = warmCacheFileOf(file)
  const source = fs.readFileSync(file, "utf8")
  const warmData = readIfThere(warmFile)
  const cachedData = warmData ?? readIfThere(cacheFile)
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData !== undefined ? { cachedData } : {}) })
  const module = { exports: {} as A }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
  const stale = cachedData === undefined || script.cachedDataRejected === true
  // A warm cache V8 refuses goes, so that the next owners fall back to the build's.
  if (warmData !== undefined && stale) fs.rm(warmFile, () => {})
  return {
    exports: module.exports,
    cached: !stale,
    refresh: () => {
      if (stale) writeAtomically(cacheFile, script.createCachedData())
    },
    warm: () => {
      if (warmData === undefined || stale) writeAtomically(warmFile, script.createCachedData())
    }
  }
}
