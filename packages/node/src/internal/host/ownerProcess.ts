/**
 * Starting an owner process (`isolation: "process"`): where its bundled entry lives, its stdio (the IPC channel of
 * the platform Worker's control plane, and a pipe on fd 4 for the data plane, see `linePort.ts`), and its Node flags.
 */
import * as NodeChildProcess from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import type { Duplex } from "node:stream"
import { withoutLoaderFlags } from "./ownerThread.js"

/** Where the bundled owner-process entry lives, from `src/internal` and from `dist/internal` alike. */
const entry = new URL("../../../owner/owner-process.cjs", import.meta.url)

/** @internal */
export const bundleExists = (): boolean => fs.existsSync(entry)

/** @internal */
export interface StartOptions {
  /** The V8 heap limit of the owner, in MB (`--max-old-space-size`). */
  readonly maxOldGenerationSizeMb: number | undefined
}

/**
 * Forks an owner process and returns it with its end of the data pipe. Its stdout and stderr are the host's, as an
 * owner thread's are; it reads nothing on stdin.
 *
 * @internal
 */
export const start = (options: StartOptions): { readonly child: ChildProcess; readonly data: Duplex } => {
  const execArgv = withoutLoaderFlags(process.execArgv)
  if (options.maxOldGenerationSizeMb !== undefined)
    execArgv.push(`--max-old-space-size=${options.maxOldGenerationSizeMb}`)
  const child = NodeChildProcess.fork(entry, [], {
    execArgv,
    // The control plane's messages are the platform's encoded requests: structured clone, as between threads.
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc", "pipe"]
  })
  return { child, data: child.stdio[4] as Duplex }
}
