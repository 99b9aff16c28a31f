// Sandbox processes for the listener tests: test/fixtures/sandbox.ts bundled once for the run (test/globalSetup.ts;
// one file boots fast), run as real child processes that know nothing but the socket path and what they are sent.
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { inject } from "vitest"

/** Where the sandbox is bundled for the run (test/globalSetup.ts). */
export const sandboxEntry = (): (() => string) => () => inject("sandboxEntry")

/** What a sandbox said about one command. */
export interface Outcome {
  readonly n: number
  readonly ok: boolean
  readonly value?: any
  readonly progress?: ReadonlyArray<unknown>
  readonly error?: {
    readonly _tag: string
    readonly delivery?: string
    readonly reason?: string
    /** The error's `name`: `AbortError` for a call's own signal's reason (C66: nothing was sent). */
    readonly name?: string
    readonly message: string
  }
}

/** A running sandbox process. */
export interface Sandbox {
  readonly child: ChildProcess
  /** Sends one command; resolves with its outcome. */
  readonly run: (op: string, args: ReadonlyArray<unknown>, extra?: Record<string, unknown>) => Promise<Outcome>
  /** Sends a command and does not wait (for a sandbox killed mid-call). */
  readonly post: (op: string, args: ReadonlyArray<unknown>, extra?: Record<string, unknown>) => Promise<Outcome>
  /** Disposes of the client and resolves with the exit code. */
  readonly exit: () => Promise<number | null>
  readonly exited: Promise<number | null>
}

/** A fresh private directory for a socket (0700), and its socket path. */
export const socketPath = (): { readonly dir: string; readonly path: string } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpl-"))
  fs.chmodSync(dir, 0o700)
  return { dir, path: path.join(dir, "host.sock") }
}

/** Starts a sandbox on `socket`; resolves once it is ready. */
export const startSandbox = async (entry: string, socket: string): Promise<Sandbox> => {
  const child = spawn(process.execPath, [entry, socket], { stdio: ["pipe", "pipe", "inherit"] })
  const waiting = new Map<number, (outcome: Outcome) => void>()
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const ready = new Promise<void>((resolve) => waiting.set(0, () => resolve()))
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const outcome = JSON.parse(line) as Outcome
    waiting.get(outcome.n)?.(outcome)
    waiting.delete(outcome.n)
  })
  let next = 1
  const post = (op: string, args: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => {
    const n = next++
    const outcome = new Promise<Outcome>((resolve) => waiting.set(n, resolve))
    child.stdin!.write(JSON.stringify({ n, op, args, ...extra }) + "\n")
    return outcome
  }
  await ready
  return {
    child,
    run: post,
    post,
    exit: () => {
      child.stdin!.write(JSON.stringify({ op: "exit" }) + "\n")
      return exited
    },
    exited
  }
}

/**
 * A host listening on a fresh private socket path in the current scope, with its service and its grants; the path's
 * directory is removed when the scope closes.
 */
export const listening = (options: Partial<NodeMcpWorkers.ListenOptions> = {}) =>
  Effect.gen(function* () {
    const socket = socketPath()
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
    const context = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path, ...options }))
    return {
      path: socket.path,
      workers: context.unsafeMap.get(McpWorkers.key) as McpWorkers["Type"],
      grants: context.unsafeMap.get(McpGrants.McpGrants.key) as McpGrants.McpGrantsService
    }
  })

/** A sandbox for the scope, SIGKILLed when the scope closes. */
export const scopedSandbox = (socket: string) =>
  Effect.acquireRelease(
    Effect.promise(() => startSandbox(inject("sandboxEntry"), socket)),
    (box) => Effect.sync(() => box.child.kill("SIGKILL"))
  )

/** Blocks this thread (the host's) for `ms`: no timer fires and no socket or owner message is read meanwhile. */
export const stall = (ms: number): number => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    // nothing else runs on this thread
  }
  return Date.now()
}
