// IPC carries the control plane, fd 4 the data plane.
import * as NodeChildProcess from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import type { Duplex } from "node:stream"
import { withoutLoaderFlags } from "./ownerThread.js"

// From `src/internal` and `dist/internal` alike.
const entry = new URL("../../../owner/owner-process.cjs", import.meta.url)

/** @internal */
export const bundleExists = (): boolean => fs.existsSync(entry)

/** @internal */
export interface StartOptions {
  readonly maxOldGenerationSizeMb: number | undefined
}

/** @internal */
export const start = (options: StartOptions): { readonly child: ChildProcess; readonly data: Duplex } => {
  const execArgv = withoutLoaderFlags(process.execArgv)
  if (options.maxOldGenerationSizeMb !== undefined)
    execArgv.push(`--max-old-space-size=${options.maxOldGenerationSizeMb}`)
  const child = NodeChildProcess.fork(entry, [], {
    execArgv,
    // The platform's encoded requests need structured clone.
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc", "pipe"]
  })
  return { child, data: child.stdio[4] as Duplex }
}
