// Runs remote-entry.ts scenarios in fresh worker_threads. The entry is bundled with esbuild (vitest's transform does
// not reach worker threads); `effect` resolves to this workspace's Effect 4.
import { afterAll, beforeAll } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

const here = path.dirname(fileURLToPath(import.meta.url))

const externalImplementation: esbuild.Plugin = {
  name: "external-implementation",
  setup(build) {
    build.onResolve({ filter: /lib\/effect3\/[a-z]+\.mjs$/ }, (args) => ({
      path: path.resolve(args.resolveDir, args.path),
      external: true
    }))
  }
}

/** Bundles the remote entry before the file's tests and removes it after them; returns where it is. */
export const remoteEntry = (): (() => string) => {
  let dir = ""
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-effect4-remote-"))
    await esbuild.build({
      entryPoints: [path.join(here, "remote-entry.ts")],
      outfile: path.join(dir, "remote-entry.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      // The implementation is loaded from its own file, as the package loads it.
      plugins: [externalImplementation],
      logLevel: "warning"
    })
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  return () => path.join(dir, "remote-entry.mjs")
}

/** How a thread's scenario ended. */
export type Outcome = { readonly ok: true; readonly value: any } | { readonly ok: false; readonly error: string }

/** Runs a scenario in a fresh thread to its end; the thread must exit by itself (nothing may keep it alive). */
export const runInThread = (entry: string, scenario: string, data: Record<string, unknown>): Effect.Effect<Outcome> =>
  Effect.callback<Outcome>((resume) => {
    const thread = new Worker(entry, { workerData: { scenario, data }, name: `remote ${scenario}` })
    let reported: Outcome | undefined
    thread.on("message", (message: Outcome) => {
      reported = message
    })
    thread.on("error", (error) => resume(Effect.die(error)))
    thread.on("exit", (code) =>
      resume(
        reported === undefined
          ? Effect.die(new Error(`thread exited with ${code} before reporting`))
          : Effect.succeed(reported)
      )
    )
    return Effect.promise(() => thread.terminate())
  })
