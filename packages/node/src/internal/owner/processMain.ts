// Config comes on the data pipe: others can read argv and env. C27
import * as net from "node:net"
import * as path from "node:path"
import * as LinePort from "../wire/linePort.js"
import * as OwnerLoader from "./loader.js"
import * as ProcessStart from "../job/start.js"

const dataFd = 4

interface Init {
  readonly _tag: "Init"
  readonly marker: string
  readonly config: string
}

// Ctrl-C reaches this group too: the host closes its workers then.
process.on("SIGINT", () => {})

const port = LinePort.make()
port.attach(new net.Socket({ fd: dataFd, readable: true, writable: true }))

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
