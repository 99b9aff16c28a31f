// The server spawns before anything loads. CommonJS: ES costs ≈ 10 ms a thread.
import * as path from "node:path"
import type { MessagePort } from "node:worker_threads"
import { workerData } from "node:worker_threads"
import * as ProcessStart from "../job/start.js"

interface OwnerData {
  readonly port: MessagePort
  readonly marker: string
  readonly config: string
  readonly slot: SharedArrayBuffer
}

const data = workerData as OwnerData

const early = ProcessStart.startFromWire(data.config, data.marker)
// C27: in case this thread dies before its runtime is up.
if (early?.child?.pid !== undefined) data.port.postMessage({ _tag: "Spawned", pid: early.child.pid })
// The loader's crypto costs ≈ 4 ms in a fresh thread.
void import("./loader.js").then((OwnerLoader) => {
  const runtime = OwnerLoader.load<typeof import("./runtime.js")>(path.join(__dirname, "owner-runtime.cjs"))
  runtime.exports.run(data.port, early, data.slot)
  setImmediate(runtime.refresh)
  setTimeout(runtime.warm, OwnerLoader.warmAfterMs).unref()
})
