// Builds what real threads and real processes need (they bypass vitest's TypeScript transform), and after
// the whole suite fails the run if any fixture server process of ours is still alive.
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
// @ts-expect-error plain ESM build script without types
import { bundleFixtures, bundleOwner } from "../scripts/bundle.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const parentOf = (pid: string): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]
  } catch {
    return undefined
  }
}

// A live vitest of another checkout up the process's ancestry: a test run of that checkout's, not a leak of this
// one's. A leaked process has lost its test process, so it never has one (it hangs under init or a subreaper).
const anotherRunOwns = (pid: string): boolean => {
  for (let at = parentOf(pid), hops = 0; at !== undefined && at !== "0" && hops < 64; at = parentOf(at), hops++) {
    try {
      const cmdline = fs.readFileSync(`/proc/${at}/cmdline`, "utf8")
      if (cmdline.includes("vitest") && !cmdline.includes(root)) return fs.readlinkSync(`/proc/${at}/cwd`) !== root
    } catch {
      return false
    }
  }
  return false
}

const ourProcesses = (): Array<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const status = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      if (/\) Z /.test(status)) continue
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8")
      if (
        (cmdline.includes(path.join(root, "test/fixtures")) || environ.includes("MCP_WORKER_JOB=")) &&
        !anotherRunOwns(entry)
      ) {
        found.push(`${entry}: ${cmdline.slice(0, 160)}`)
      }
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

// @mcp-worker/caller as a sandbox imports it, compiled (examples/sandbox/sandbox.mjs runs under Node, Deno and Bun).
const buildCaller = () =>
  new Promise<void>((resolve, reject) =>
    execFile(
      process.execPath,
      [path.join(root, "node_modules/typescript/bin/tsc"), "-b", "packages/caller"],
      { cwd: root },
      (error, _out, err) => (error ? reject(new Error(`tsc -b packages/caller: ${err}`)) : resolve())
    )
  )

declare module "vitest" {
  export interface ProvidedContext {
    /** test/node/remote-entry.ts bundled, for the remote threads of test/node/remoteThread.ts. */
    readonly remoteEntry: string
    /** test/fixtures/sandbox.ts bundled, for the sandbox processes of test/node/listenSandbox.ts. */
    readonly sandboxEntry: string
  }
}

// Loaded in the same `require` way by both bundles: the SDK and its peers are CommonJS in places.
const requireBanner =
  'import { createRequire as __mcpwCreateRequire } from "node:module"; const require = __mcpwCreateRequire(import.meta.url);'

// Bundled once for the run rather than once per file: each bundle costs seconds of CPU, and a score of files
// start remote threads or sandboxes (vitest's TypeScript transform reaches neither; one bundled file boots fast).
// A thread that runs a host finds the owner bundle where the library looks for it, `../../../owner/owner.cjs` from
// its entry.
const bundleEntries = async (dir: string): Promise<{ remoteEntry: string; sandboxEntry: string }> => {
  const remoteEntry = path.join(dir, "src", "internal", "host", "remote-entry.mjs")
  const sandboxEntry = path.join(dir, "sandbox", "sandbox.mjs")
  fs.mkdirSync(path.dirname(remoteEntry), { recursive: true })
  fs.symlinkSync(path.join(root, "packages/node/owner"), path.join(dir, "owner"))
  // The root tsconfig maps `@mcp-worker/*` to the sources.
  const common = {
    bundle: true,
    platform: "node",
    format: "esm",
    tsconfig: path.join(root, "tsconfig.json"),
    banner: { js: requireBanner },
    logLevel: "warning"
  } as const
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: [path.join(root, "test/node/remote-entry.ts")],
      outfile: remoteEntry,
      target: "node22",
      minify: true
    }),
    esbuild.build({
      ...common,
      entryPoints: [path.join(root, "test/fixtures/sandbox.ts")],
      outfile: sandboxEntry,
      target: "node20"
    })
  ])
  return { remoteEntry, sandboxEntry }
}

const prepare = async () => {
  // Processes that were alive before this run (another run on the same machine) are not this run's to judge.
  const before = new Set(process.platform === "linux" ? ourProcesses().map((line) => line.split(":")[0]!) : [])
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-entries-"))
  const [entries] = await Promise.all([bundleEntries(dir), bundleOwner(), bundleFixtures(), buildCaller()])
  return { ...entries, dir, before }
}

// vitest runs setup for the root project and then for each project of the run (vitest.config.ts has two), one after
// another, each maybe with its own copy of this module: the run's work is done once, and undone once.
const once = globalThis as { mcpwPrepared?: ReturnType<typeof prepare>; mcpwTornDown?: boolean }

export async function setup(project: TestProject) {
  const prepared = await (once.mcpwPrepared ??= prepare())
  project.provide("remoteEntry", prepared.remoteEntry)
  project.provide("sandboxEntry", prepared.sandboxEntry)
}

export async function teardown() {
  if (once.mcpwPrepared === undefined || once.mcpwTornDown === true) return
  once.mcpwTornDown = true
  const { before, dir } = await once.mcpwPrepared
  fs.rmSync(dir, { recursive: true, force: true })
  if (process.platform !== "linux") return
  const fresh = () => ourProcesses().filter((line) => !before.has(line.split(":")[0]!))
  let left = fresh()
  for (let i = 0; i < 30 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    left = fresh()
  }
  if (left.length > 0) {
    throw new Error(`the suite left processes running:\n${left.join("\n")}`)
  }
}
