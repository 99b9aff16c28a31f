// Builds what real threads and real processes need (they bypass vitest's TypeScript transform), and after
// the whole suite fails the run if any fixture server process of ours is still alive.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
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

// Processes that were alive before this run (another run on the same machine) are not this run's to judge.
let before = new Set<string>()

export async function setup() {
  if (process.platform === "linux") before = new Set(ourProcesses().map((line) => line.split(":")[0]!))
  await Promise.all([bundleOwner(), bundleFixtures(), buildCaller()])
}

export async function teardown() {
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
