// Shared helpers for tests that run real owner threads and real server processes.
import type { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { makePromiseClient, NodeMcpWorkers } from "@mcp-worker/node"
import type { PromiseClient } from "@mcp-worker/node/PromiseClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as RcRef from "effect/RcRef"
import * as Scope from "effect/Scope"
import { type ChildProcessByStdio, spawn } from "node:child_process"
import * as DiagnosticsChannel from "node:diagnostics_channel"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import type { Worker } from "node:worker_threads"
import { afterAll } from "vitest"

/** Runs `effect` with a fresh host registry, closed (with all its workers) when the effect ends. */
export const withHost = <A, E>(effect: Effect.Effect<A, E, McpWorkers>) =>
  Effect.provide(effect, NodeMcpWorkers.layer())

/**
 * For tests that run at once: `withHost` with one host, held while any of them runs and closed when the last ends (or
 * with the file). A remote thread, or a Promise client of this thread, reaches the process's newest host, so such
 * tests cannot each have one; each opens workers of its own.
 */
export const sharedHost = () => {
  const scope = Effect.runSync(Scope.make())
  const host = Effect.runSync(RcRef.make({ acquire: Layer.build(NodeMcpWorkers.layer()) }).pipe(Scope.extend(scope)))
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return <A, E>(effect: Effect.Effect<A, E, McpWorkers | Scope.Scope>) =>
    Effect.scoped(Effect.flatMap(RcRef.get(host), (context) => Effect.provide(effect, context)))
}

/** Runs `f` with a Promise client of this thread, disposed when it settles. */
export const withPromiseClient = <A>(f: (mcp: PromiseClient) => Promise<A>): Effect.Effect<A> =>
  Effect.promise(() => {
    const mcp = makePromiseClient()
    return f(mcp).finally(() => mcp.dispose())
  })

/** A tool result's `structuredContent`, for reading fixture answers. */
export const structured = (result: { structuredContent?: unknown }) => result.structuredContent as Record<string, any>

/** Live (non-zombie) processes whose environment holds `name=value` exactly. */
export const processesWithEnv = (name: string, value: string): Array<number> => {
  const entry = `${name}=${value}`
  const found: Array<number> = []
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z") continue
      if (fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry)) found.push(Number(pid))
    } catch {
      // gone while we looked
    }
  }
  return found
}

/** Whether a process is alive (and not a zombie). */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

/** Owner threads show up as MessagePorts among the active resources (with the data ports). */
export const activePorts = (): number => process.getActiveResourcesInfo().filter((r) => r === "MessagePort").length

/** Polls `check` every 20 ms until it holds or `ms` pass; returns whether it held. */
export const eventually = async (check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

/** A unique value for tagging the processes of one test. */
export const tag = (): string => `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`

/**
 * Every worker thread this thread starts while the scope is open, as Node's built-in `worker_threads` diagnostics
 * channel announces it: how a test gets hold of an owner thread to end it from outside, as a crash would.
 */
export const startedThreads: Effect.Effect<ReadonlyArray<Worker>, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const threads: Array<Worker> = []
      const onStart = (message: unknown) => {
        threads.push((message as { readonly worker: Worker }).worker)
      }
      DiagnosticsChannel.subscribe("worker_threads", onStart)
      return { threads, onStart }
    }),
    ({ onStart }) => Effect.sync(() => DiagnosticsChannel.unsubscribe("worker_threads", onStart))
  ),
  ({ threads }) => threads
)

/** The owner thread of a worker, found among the started threads by the `threadId` its status reports. */
export const ownerThread = (threads: ReadonlyArray<Worker>, threadId: number | null): Effect.Effect<Worker> =>
  Effect.suspend(() => {
    const thread = threads.find((candidate) => threadId !== null && candidate.threadId === threadId)
    return thread === undefined ? Effect.dieMessage(`no started thread has the id ${threadId}`) : Effect.succeed(thread)
  })

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * Starts test/fixtures/host-program.ts in `mode` as a separate host process and waits for its `READY <testTag>` line;
 * gives the process and everything it printed until then. When the scope closes, the host and every process carrying
 * `TEST_TAG=<testTag>` are SIGKILLed, whatever the test left.
 */
export const hostProgram = (
  mode: string,
  testTag: string
): Effect.Effect<
  { readonly host: ChildProcessByStdio<null, Readable, null>; readonly stdout: string },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const host = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", "tsx", path.join(root, "test/fixtures/host-program.ts"), mode, testTag], {
          cwd: root,
          stdio: ["ignore", "pipe", "inherit"]
        })
      ),
      (child) =>
        Effect.sync(() => {
          child.kill("SIGKILL")
          for (const pid of processesWithEnv("TEST_TAG", testTag)) process.kill(pid, "SIGKILL")
        })
    )
    const stdout = yield* Effect.promise(
      () =>
        new Promise<string>((resolve, reject) => {
          let text = ""
          host.stdout.setEncoding("utf8")
          host.stdout.on("data", (chunk: string) => {
            text += chunk
            if (text.includes(`READY ${testTag}\n`)) resolve(text)
          })
          host.once("exit", (code) => reject(new Error(`the host program exited (${code}) before READY`)))
        })
    )
    return { host, stdout }
  })

/**
 * One raw 2026-07-28 request to the gateway at `url`, its envelope declaring `capabilities`: the JSON-RPC answer, read
 * from a JSON body or from the last data line of an event stream.
 */
export const modernPost = async (
  url: string,
  grant: string,
  request: { readonly method: string; readonly name: string; readonly params: Record<string, unknown> },
  capabilities: Record<string, unknown>
): Promise<{ result?: unknown; error?: { code: number; message: string; data: Record<string, unknown> } }> => {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "wire", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": capabilities
  }
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${grant}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": request.method,
      "mcp-name": request.name
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: request.method, params: { ...request.params, _meta } })
  })
  const text = await response.text()
  const lines = text.split("\n").filter((line) => line.startsWith("data:"))
  return JSON.parse(lines.length === 0 ? text : lines.at(-1)!.slice(5))
}
