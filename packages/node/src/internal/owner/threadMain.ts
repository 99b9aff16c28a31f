/**
 * The entry of an owner thread. It starts a stdio server before loading anything else, so the server boots
 * while this thread is still loading the MCP client (thread start-up is dominated by module loading), then
 * loads and runs the owner runtime. Built by scripts/bundle.mjs into a CommonJS file (a thread whose entry is an ES
 * module starts Node's ES module loader first, ≈ 10 ms more per thread): this tiny prelude uses Node built-ins only;
 * the minified runtime is loaded with V8's code cache.
 */
import * as path from "node:path"
import type { MessagePort } from "node:worker_threads"
import { workerData } from "node:worker_threads"
import * as ProcessStart from "../job/start.js"

interface OwnerData {
  readonly port: MessagePort
  readonly marker: string
  readonly config: string
  /** Where this owner records the request it took straight from a remote caller, for the host's `status`. */
  readonly slot: SharedArrayBuffer
}

const data = workerData as OwnerData

const early = ProcessStart.startFromWire(data.config, data.marker)
// The host learns the process at once: even if this thread dies before its runtime is up, the tree can be ended.
if (early?.child?.pid !== undefined) data.port.postMessage({ _tag: "Spawned", pid: early.child.pid })
// Imported only now, which the bundle turns into a module initialized on first use: what the loader needs (crypto
// above all, ≈ 4 ms in a fresh thread) is loaded after the server's spawn, not before it.
void import("./loader.js").then((OwnerLoader) => {
  const runtime = OwnerLoader.load<typeof import("./runtime.js")>(path.join(__dirname, "owner-runtime.cjs"))
  runtime.exports.run(data.port, early, data.slot)
  setImmediate(runtime.refresh)
  // Once it has opened and served for a while, what the owner compiled goes into the warm cache (a few ms, once per
  // install and V8): later owners skip compiling the connect and request paths.
  setTimeout(runtime.warm, OwnerLoader.warmAfterMs).unref()
})
