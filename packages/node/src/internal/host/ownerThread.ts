import * as fs from "node:fs"
import { Worker, type WorkerOptions } from "node:worker_threads"

// From `src/internal` and `dist/internal` alike.
const entry = new URL("../../../owner/owner.cjs", import.meta.url)

/** @internal */
export const bundleExists = (): boolean => fs.existsSync(entry)

// The host's loaders would only slow the bundled owner (≈ 100 ms for tsx). `undefined` inherits the flags, minus what
// a worker cannot take; an explicit list with one is refused.
const loaderFlags = [
  "--import",
  "--loader",
  "--experimental-loader",
  "--require",
  "-r",
  "--input-type",
  "--experimental-default-type"
]
const isLoaderFlag = (arg: string) => loaderFlags.some((flag) => arg === flag || arg.startsWith(`${flag}=`))
const ownerExecArgv = (): Array<string> | undefined =>
  process.execArgv.some(isLoaderFlag) ? withoutLoaderFlags(process.execArgv) : undefined

/** @internal */
export const withoutLoaderFlags = (argv: ReadonlyArray<string>): Array<string> => {
  const kept: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (isLoaderFlag(arg)) {
      if (!arg.includes("=")) i++
      continue
    }
    kept.push(arg)
  }
  return kept
}

/**
 * C88: 16 MiB semi-spaces cost a thread ≈ 6 MiB; 2 MiB ran a full collection per open. Not a V8 flag, so the
 * code cache stays valid.
 *
 * @internal
 */
export const ownerResourceLimits = { maxYoungGenerationSizeMb: 4 } as const

/** @internal */
export const start = (options: WorkerOptions): Worker => {
  const withLimits = { ...options, resourceLimits: { ...ownerResourceLimits, ...options.resourceLimits } }
  try {
    return new Worker(entry, { ...withLimits, execArgv: ownerExecArgv() })
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error
    return new Worker(entry, { ...withLimits, execArgv: [] })
  }
}
