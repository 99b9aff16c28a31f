/**
 * The owner runtime with V8's code cache: compiling is a third of an owner's start-up. V8 rejects another version's
 * cache, so each has its own file. C67
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"

const wrap = (source: string) => `(function (exports, require, module, __filename, __dirname) {${source}\n})`

const v8Tag = (): string => `v8-${process.versions.v8}-${process.arch}-${v8.cachedDataVersionTag().toString(36)}`

/** C67 @internal */
export const cacheDirectory = (): string => {
  const xdg = process.env.XDG_CACHE_HOME
  return xdg !== undefined && path.isAbsolute(xdg)
    ? path.join(xdg, "mcp-worker")
    : path.join(os.tmpdir(), `mcp-worker-${process.getuid?.() ?? "cache"}`)
}

/** V8 checks only the source's length. @internal */
export const userCacheFileOf = (file: string, source: string): string => {
  const digest = crypto.createHash("sha1").update(source).digest("hex").slice(0, 16)
  return path.join(cacheDirectory(), `${path.basename(file, ".cjs")}-${digest}.${v8Tag()}.cache`)
}

/** Compiled lazily, on first use. @internal */
export const warmCacheFileOf = (file: string, source: string): string =>
  userCacheFileOf(file, source).replace(/\.cache$/, ".warm.cache")

/** @internal */
export const warmAfterMs = 2_000

// A cache is code: one another user can write is not read.
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

// Atomic: many owners start at once; best effort: the directory may be unwritable.
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

/** Written later, so functions compiled while running are cached too. @internal */
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
  // Not the buffer: over 1 MiB, for the thread's life.
  const warmLoaded = warmData !== undefined
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
