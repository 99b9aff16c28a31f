/**
 * Loads the owner runtime (one minified CommonJS file) through `vm.Script` with V8's code cache: compiling
 * the ~550 KB bundle is a third of an owner thread's start-up, and the cache removes most of it. Node
 * built-ins only: this runs before anything else in the thread.
 *
 * A cache is only valid for the V8 that made it and for the flags it ran with (`--max-old-space-size`, `--expose-gc`
 * or any other V8 flag makes V8 reject it), so there is one file per V8 version, architecture and flag set: Node
 * versions sharing one installed package, and processes started with other flags (an owner process with a heap
 * limit), each keep theirs instead of rewriting one another's.
 *
 * No cache ships (one the build made would fit only the build's Node): the first owner on each V8 writes one into the
 * user's cache directory, never into the installed package (C67): a container image or a shared store is read-only.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"

const wrap = (source: string) => `(function (exports, require, module, __filename, __dirname) {${source}\n})`

/** This V8's name for its caches: version, architecture and V8's own check value (its flags and the CPU's features). */
const v8Tag = (): string => `v8-${process.versions.v8}-${process.arch}-${v8.cachedDataVersionTag().toString(36)}`

/**
 * Where owners write code caches (C67): `$XDG_CACHE_HOME/mcp-worker` when that is set (and absolute, as the XDG
 * specification wants it), else `mcp-worker-<uid>` in the system's temporary directory.
 *
 * @internal
 */
export const cacheDirectory = (): string => {
  const xdg = process.env.XDG_CACHE_HOME
  return xdg !== undefined && path.isAbsolute(xdg)
    ? path.join(xdg, "mcp-worker")
    : path.join(os.tmpdir(), `mcp-worker-${process.getuid?.() ?? "cache"}`)
}

/**
 * The cache an owner writes when there is none or V8 refuses it, in `cacheDirectory()`. Its name carries a digest
 * of the runtime's source: every install of every version shares the directory, and V8 checks a cache against the
 * source's length only.
 *
 * @internal
 */
export const userCacheFileOf = (file: string, source: string): string => {
  const digest = crypto.createHash("sha1").update(source).digest("hex").slice(0, 16)
  return path.join(cacheDirectory(), `${path.basename(file, ".cjs")}-${digest}.${v8Tag()}.cache`)
}

/**
 * The code cache an owner writes once it has served (`warm`): the first one holds only what loading the runtime
 * compiles, while an open and its first requests compile the client's connect and request paths as well,
 * lazily, in every thread. Loaded first when it is there.
 *
 * @internal
 */
export const warmCacheFileOf = (file: string, source: string): string =>
  userCacheFileOf(file, source).replace(/\.cache$/, ".warm.cache")

/** How long an owner runs before it writes the warm cache: past its open and first requests. @internal */
export const warmAfterMs = 2_000

// A code cache is code: one in a directory another user can write to (a shared temporary directory) is not read.
const isPrivate = (dir: string): boolean => {
  try {
    const stat = fs.statSync(dir)
    return (
      stat.isDirectory() && (stat.mode & 0o022) === 0 && (process.getuid === undefined || stat.uid === process.getuid())
    )
  } catch {
    return false
  }
}

const readIfThere = (file: string): Buffer | undefined => {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

// Best effort, atomic: many owners may start at once, and the cache directory may be unwritable. Whether the directory
// is private is decided here, before anything is written.
const writeAtomically = (target: string, data: Buffer): void => {
  const dir = path.dirname(target)
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch {
    return
  }
  if (!isPrivate(dir)) return
  const temporary = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}`
  fs.writeFile(temporary, data, (error) => {
    if (error) return
    fs.rename(temporary, target, (renameError) => {
      if (renameError) fs.rm(temporary, () => {})
    })
  })
}

/**
 * Compiles and runs the runtime at `file`, using this V8's code cache in the user's cache directory when V8 accepts
 * it: the warm one first, then the first one an owner wrote. Returns the runtime's
 * exports, whether a cache was used (`cached`), `refresh` to write a missing or rejected cache once the runtime has
 * run (functions compiled while running are then in it too), and `warm` to write the warm cache once the owner has
 * served, unless it was loaded from one.
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
  const source = fs.readFileSync(file, "utf8")
  const userFile = userCacheFileOf(file, source)
  const warmFile = warmCacheFileOf(file, source)
  const trusted = isPrivate(path.dirname(userFile))
  const warmData = trusted ? readIfThere(warmFile) : undefined
  const cachedData = warmData ?? (trusted ? readIfThere(userFile) : undefined)
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData !== undefined ? { cachedData } : {}) })
  const module = { exports: {} as A }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
  const stale = cachedData === undefined || script.cachedDataRejected === true
  // Only whether there was one: the closures below live as long as the thread, and the cache itself is over 1 MiB.
  const warmLoaded = warmData !== undefined
  // A warm cache V8 refuses goes, so that the next owners fall back to the others.
  if (warmLoaded && stale) fs.rm(warmFile, () => {})
  return {
    exports: module.exports,
    cached: !stale,
    refresh: () => {
      if (stale) writeAtomically(userFile, script.createCachedData())
    },
    warm: () => {
      if (!warmLoaded || stale) writeAtomically(warmFile, script.createCachedData())
    }
  }
}
