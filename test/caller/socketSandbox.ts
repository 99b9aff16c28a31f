// The socket plane's sandbox program (test/caller/sandbox/socketCaller.ts) bundled once per file with esbuild, and
// run as a real child process of Node, Deno 2 or Bun 1, each found in its npm platform package.
import { afterAll, beforeAll } from "@effect/vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** A runtime the suite runs under: its binary and how it runs a program, or why it cannot here. */
export interface Runtime {
  readonly name: "node" | "deno" | "bun"
  readonly command: string | undefined
  readonly args: ReadonlyArray<string>
  readonly missing: string | undefined
}

const platformPackage = (name: "deno" | "bun"): string => {
  const arch = process.arch === "arm64" ? "aarch64" : process.arch
  if (name === "deno") return path.join(root, `node_modules/@deno/${process.platform}-${arch}-glibc/deno`)
  const bunArch = process.arch === "arm64" ? "aarch64" : "x64"
  return path.join(root, `node_modules/@oven/bun-${process.platform}-${bunArch}/bin/bun`)
}

const found = (name: "deno" | "bun", args: ReadonlyArray<string>): Runtime => {
  const binary = platformPackage(name)
  return fs.existsSync(binary)
    ? { name, command: binary, args, missing: undefined }
    : {
        name,
        command: undefined,
        args,
        missing: `${name} is not installed for ${process.platform}-${process.arch} (${binary})`
      }
}

/** Node, Deno and Bun. @internal */
export const runtimes: ReadonlyArray<Runtime> = [
  { name: "node", command: process.execPath, args: [], missing: undefined },
  found("deno", ["run", "--allow-all", "--quiet"]),
  found("bun", ["run"])
]

/** Bundles the sandbox program before the file's tests; gives its path. */
export const sandboxBundle = (): (() => string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-caller-sandbox-"))
  const entry = path.join(dir, "socketCaller.mjs")
  beforeAll(async () => {
    await esbuild.build({
      entryPoints: [path.join(root, "test/caller/sandbox/socketCaller.ts")],
      outfile: entry,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "es2022",
      logLevel: "warning"
    })
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  return () => entry
}

/** What the sandbox said about one command. */
export interface Outcome {
  readonly n: number
  readonly ok: boolean
  readonly runtime?: string
  readonly value?: any
  readonly progress?: ReadonlyArray<any>
  readonly error?: {
    readonly _tag?: string
    readonly delivery?: string
    readonly reason?: string
    readonly message: string
  }
}

/** A running sandbox. */
export interface Sandbox {
  readonly child: ChildProcess
  readonly runtime: string
  readonly run: (command: Record<string, unknown>) => Promise<Outcome>
  readonly exit: () => Promise<number | null>
}

/** Starts the sandbox under `runtime` on `socket`; resolves once it is ready. */
export const startSandbox = async (runtime: Runtime, entry: string, socket: string): Promise<Sandbox> => {
  const child = spawn(runtime.command!, [...runtime.args, entry, socket], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, NO_COLOR: "1" }
  })
  const waiting = new Map<number, (outcome: Outcome) => void>()
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  let ready!: (outcome: Outcome) => void
  const started = new Promise<Outcome>((resolve) => (ready = resolve))
  waiting.set(0, ready)
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const outcome = JSON.parse(line) as Outcome
    waiting.get(outcome.n)?.(outcome)
    waiting.delete(outcome.n)
  })
  let next = 1
  const run = (command: Record<string, unknown>) => {
    const n = next++
    const outcome = new Promise<Outcome>((resolve) => waiting.set(n, resolve))
    child.stdin!.write(JSON.stringify({ n, ...command }) + "\n")
    return outcome
  }
  const first = await started
  return {
    child,
    runtime: first.runtime ?? "?",
    run,
    exit: () => {
      child.stdin!.write(JSON.stringify({ n: -1, op: "exit" }) + "\n")
      return exited
    }
  }
}
