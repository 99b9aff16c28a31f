/**
 * Starting an owner thread: where its bundled entry lives, and which of the host's Node flags it gets.
 */
import * as fs from "node:fs"
import { Worker, type WorkerOptions } from "node:worker_threads"

/** Where the bundled owner entry lives, from `src/internal` and from `dist/internal` alike. */
const entry = new URL("../../../owner/owner.cjs", import.meta.url)

/** @internal */
export const bundleExists = (): boolean => fs.existsSync(entry)

// The owner runs one bundled CommonJS file: loaders and preloads of the host (tsx, test runners…) would only slow
// its start (≈ 100 ms for tsx). Without them the host's flags are simply inherited (`undefined`: Node then
// drops what a worker cannot take, such as V8 flags, which an explicit list would be refused for).
const loaderFlags = [
  "--import",
  "--loader",
  "--experimental-loader",
  "--require",
  "-r",
  // How the host's own entry is read, never the owner's (a module given as `--input-type=module` on stdin).
  "--input-type",
  "--experimental-default-type"
]
const isLoaderFlag = (arg: string) => loaderFlags.some((flag) => arg === flag || arg.startsWith(`${flag}=`))
const ownerExecArgv = (): Array<string> | undefined =>
  process.execArgv.some(isLoaderFlag) ? withoutLoaderFlags(process.execArgv) : undefined

/** The host's Node flags without its loaders and preloads, for an owner thread or process. @internal */
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
 * An owner thread's young generation (C88): V8 sizes a thread's like a process's (16 MiB semi-spaces), ≈ 6 MiB of RSS
 * a thread that one connection never needs back. At 2 MiB, though, loading the runtime and opening promote so much
 * that every open ran a full collection before `initialize` was answered; 4 MiB spares most of them. Not a V8 flag:
 * the code cache stays valid.
 *
 * @internal
 */
export const ownerResourceLimits = { maxYoungGenerationSizeMb: 4 } as const

/** Starts an owner thread; never with a flag list a worker refuses. @internal */
export const start = (options: WorkerOptions): Worker => {
  const withLimits = { ...options, resourceLimits: { ...ownerResourceLimits, ...options.resourceLimits } }
  try {
    return new Worker(entry, { ...withLimits, execArgv: ownerExecArgv() })
  } catch (error) {
    // A flag of the host that a worker refuses (V8 flags in an explicit list): start with none.
    if ((error as { code?: unknown }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error
    return new Worker(entry, { ...withLimits, execArgv: [] })
  }
}
