// Built-ins only: the Promise client loads no Effect.
import * as fs from "node:fs"
import * as path from "node:path"

/** @internal */
export const checkSavePath = (target: string): string | undefined => {
  if (!path.isAbsolute(target)) return "saveTo must be an absolute path"
  if (target.includes("\0")) return "saveTo must not contain NUL characters"
  const dir = path.dirname(target)
  const existing = statOf(target)
  if (existing?.isDirectory() === true) return "saveTo names an existing directory"
  const parent = statOf(dir)
  if (parent === undefined) return `the directory of saveTo does not exist (${dir})`
  if (!parent.isDirectory()) return `the parent of saveTo is not a directory (${dir})`
  try {
    fs.accessSync(dir, fs.constants.W_OK)
  } catch {
    return `the directory of saveTo is not writable (${dir})`
  }
  return undefined
}

/** @internal */
export const checkSpillDirectory = (dir: string): string | undefined => {
  if (!path.isAbsolute(dir)) return "spill must be an absolute directory path"
  if (dir.includes("\0")) return "spill must not contain NUL characters"
  const stat = statOf(dir)
  if (stat === undefined) return `the spill directory does not exist (${dir})`
  if (!stat.isDirectory()) return `spill is not a directory (${dir})`
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK)
  } catch {
    return `the spill directory is not writable (${dir})`
  }
  return undefined
}

const statOf = (file: string): fs.Stats | undefined => {
  try {
    return fs.statSync(file)
  } catch {
    return undefined
  }
}
