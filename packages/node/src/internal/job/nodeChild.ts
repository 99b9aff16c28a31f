// Kept from public declarations, so programs type-check without Node's types.
import type { ChildProcess as NodeChildProcess } from "node:child_process"
import type { ChildProcess } from "../../ProcessJob.js"

/** @internal */
export const nodeChildOf = (child: ChildProcess): NodeChildProcess => child as NodeChildProcess
