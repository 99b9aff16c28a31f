/**
 * The entry of an owner process (`isolation: "process"`). The host forks it with an IPC channel for the platform
 * Worker's control plane and a pipe of its own on fd 4 for the data plane (`linePort.ts`); the first line on that
 * pipe is what an owner thread gets as `workerData` (the marker and the config), kept off the command line and the
 * environment, where other processes could read the server's secrets. As the thread's entry does, it starts a stdio
 * server before it loads the runtime. Node built-ins only, bundled by scripts/bundle.mjs into a CommonJS file, as the
 * thread's entry is.
 *
 * If the host dies, the IPC channel closes: the owner then ends its server's process group itself and exits, a second
 * line of defence beside the host's reaper (C27).
 */
import * as net from "node:net"
import * as path from "node:path"
import * as LinePort from "../wire/linePort.js"
import * as OwnerLoader from "./loader.js"
import * as ProcessStart from "../job/start.js"

/** The fd of the data pipe, as `OwnerProcess.start` lays out the child's stdio. */
const dataFd = 4

interface Init {
  readonly _tag: "Init"
  readonly marker: string
  readonly config: string
}

// A terminal's Ctrl-C reaches the whole foreground process group, this process included: the host closes its
// workers then, and an owner that died first would turn each polite close into a failure.
process.on("SIGINT", () => {})

const port = LinePort.make()
port.attach(new net.Socket({ fd: dataFd, readable: true, writable: true }))

/** Ends the server's process group, if the server is still running (the host is gone and cannot). */
const endTree = (early: ProcessStart.StartedProcess | undefined) => {
  const child = early?.child
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch {
    // already gone
  }
}

const onInit = (message: unknown) => {
  port.off("message", onInit)
  const init = message as Init
  const early = ProcessStart.startFromWire(init.config, init.marker)
  if (early?.child?.pid !== undefined) port.postMessage({ _tag: "Spawned", pid: early.child.pid })
  process.once("disconnect", () => {
    endTree(early)
    process.exit(1)
  })
  const runtime = OwnerLoader.load<typeof import("./runtime.js")>(path.join(__dirname, "owner-runtime.cjs"))
  runtime.exports.run(port, early)
  setImmediate(runtime.refresh)
  setTimeout(runtime.warm, OwnerLoader.warmAfterMs).unref()
}
port.on("message", onInit)
