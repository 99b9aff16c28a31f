// The bench's own worker-thread entries (the remote caller and the profiling probe), bundled with esbuild at
// bench start into a temporary directory: worker threads do not go through tsx, and the library's owner bundle
// is built by scripts/bundle.mjs the same way.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")

export interface Bundles {
  readonly remote: string
  readonly probe: string
  /** The fan-out floor's thread: CommonJS, as owner entries are (an ES module entry starts the ESM loader first). */
  readonly floor: string
  /** Removes the temporary directory. */
  readonly remove: () => void
}

/** Bundles bench/remoteEntry.ts, bench/probeEntry.ts and bench/floorEntry.ts into a fresh directory under `os.tmpdir()`. */
export const bundleEntries = async (): Promise<Bundles> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-bench-"))
  const remove = () => fs.rmSync(dir, { recursive: true, force: true })
  // Also on a crash or an early exit: nothing of the bench may stay behind.
  process.once("exit", remove)
  await esbuild.build({
    entryPoints: { floor: path.join(here, "floorEntry.ts") },
    outdir: dir,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    logLevel: "warning",
    legalComments: "none"
  })
  await esbuild.build({
    entryPoints: {
      remote: path.join(here, "remoteEntry.ts"),
      probe: path.join(here, "probeEntry.ts")
    },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    logLevel: "warning",
    legalComments: "none",
    // Some CommonJS dependencies call `require` on Node built-ins; an ESM bundle needs a real `require`.
    banner: {
      js: 'import { createRequire as __benchCreateRequire } from "node:module"; const require = __benchCreateRequire(import.meta.url);'
    },
    alias: {
      "@mcp-worker/core": path.join(root, "packages/core/src/index.ts"),
      "@mcp-worker/node": path.join(root, "packages/node/src/index.ts")
    },
    plugins: [
      {
        name: "mcp-worker-subpaths",
        setup(build) {
          build.onResolve({ filter: /^@mcp-worker\/(core|node)\/.+/ }, (args) => {
            const [, pkg, sub] = /^@mcp-worker\/(core|node)\/(.+)$/.exec(args.path)!
            return { path: path.join(root, "packages", pkg!, "src", `${sub}.ts`) }
          })
        }
      }
    ]
  })
  return {
    remote: path.join(dir, "remote.mjs"),
    probe: path.join(dir, "probe.mjs"),
    floor: path.join(dir, "floor.cjs"),
    remove
  }
}

/**
 * A bench thread with a dedicated port (as the library's owners have): `next()` resolves with the next message,
 * without adding or removing a listener per message (that would be measured too).
 */
export interface BenchThread {
  readonly thread: Worker
  readonly port: MessagePort
  readonly post: (message: unknown) => void
  readonly next: <A>() => Promise<A>
  /** Posts `message` and resolves with the reply. */
  readonly ask: <A>(message: unknown) => Promise<A>
  /** Routes every message to `handler` (bypassing `next`) until set back to `undefined`. */
  readonly setHandler: (handler: ((message: unknown) => void) | undefined) => void
  /** Resolves when the thread has exited. */
  readonly exited: Promise<number>
}

export const startThread = (file: string, workerData: Record<string, unknown>): BenchThread => {
  const channel = new MessageChannel()
  const thread = new Worker(file, {
    workerData: { ...workerData, port: channel.port2 },
    transferList: [channel.port2]
  })
  const port = channel.port1
  const queue: Array<unknown> = []
  let waiting: { resolve: (m: unknown) => void; reject: (e: unknown) => void } | undefined
  let failure: unknown
  let handler: ((message: unknown) => void) | undefined
  port.on("message", (message: unknown) => {
    if (handler !== undefined) handler(message)
    else if (waiting !== undefined) {
      const w = waiting
      waiting = undefined
      w.resolve(message)
    } else queue.push(message)
  })
  const fail = (error: unknown) => {
    failure = error
    if (waiting !== undefined) {
      const w = waiting
      waiting = undefined
      w.reject(error)
    }
  }
  thread.on("error", fail)
  const exited = new Promise<number>((resolve) =>
    thread.once("exit", (code) => {
      fail(new Error(`bench thread exited (code ${code})`))
      port.close()
      resolve(code)
    })
  )
  const next = <A>(): Promise<A> => {
    if (queue.length > 0) return Promise.resolve(queue.shift() as A)
    if (failure !== undefined) return Promise.reject(failure)
    return new Promise<A>((resolve, reject) => {
      waiting = { resolve: resolve as (m: unknown) => void, reject }
    })
  }
  const post = (message: unknown) => port.postMessage(message)
  return {
    thread,
    port,
    post,
    next,
    ask: <A>(message: unknown) => {
      post(message)
      return next<A>()
    },
    setHandler: (h) => {
      handler = h
    },
    exited
  }
}
