// A job's root process as Node's `ChildProcess`, kept apart from the modules the public declarations reach: those
// name it structurally, so that a program type-checks without Node's types.
import type { ChildProcess as NodeChildProcess } from "node:child_process"
import type { ChildProcess } from "../../ProcessJob.js"

/** It is always the one `node:child_process` spawned, here or in the owner's early start. @internal */
export const nodeChildOf = (child: ChildProcess): NodeChildProcess => child as NodeChildProcess
