// Runner processes for the cluster tests (test/cluster/runner-program.ts), a client-only cluster layer for the test
// process itself, the fixture server's execution log, and a TCP proxy that a test can stop forwarding (a partition).
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import type { McpWorkers } from "../../packages/core/src/McpWorkers.js"
import { McpCluster } from "../../packages/cluster/src/index.js"

type McpClusterTag = Context.Tag.Identifier<typeof McpCluster.McpCluster>
import { fixturePath } from "../fixtures/servers.js"
import { type StorageKind, sqlLayer } from "./storage.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export interface Storage {
  readonly kind: StorageKind
  readonly target: string
}

export type Outcome = { readonly ok: true; readonly value: any } | { readonly ok: false; readonly error: any }

export interface Runner {
  readonly port: number
  readonly pid: number
  readonly group: string
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly send: (op: string, ...args: Array<unknown>) => { readonly id: number; readonly outcome: Promise<Outcome> }
  readonly call: (op: string, ...args: Array<unknown>) => Promise<Outcome>
  readonly request: (
    name: string,
    id: string,
    args: Array<unknown>,
    options?: Record<string, unknown>
  ) => Promise<Outcome>
  readonly interrupt: (callId: number) => void
  readonly exited: Promise<void>
  readonly stop: () => Promise<void>
}

export const startRunner = (
  storage: Storage,
  options: { readonly port: number; readonly listenPort?: number; readonly env?: Record<string, string> }
): Promise<Runner> =>
  new Promise((resolve, reject) => {
    // The bundle of runner-program.ts that the vitest globalSetup builds (scripts/bundle.mjs).
    const child = fork(path.join(root, "test/fixtures/dist/cluster-runner.mjs"), [], {
      cwd: root,
      execArgv: [],
      env: {
        ...process.env,
        ...options.env,
        MCPW_STORAGE: storage.kind,
        MCPW_TARGET: storage.target,
        MCPW_PORT: String(options.port),
        ...(options.listenPort === undefined ? {} : { MCPW_LISTEN_PORT: String(options.listenPort) })
      },
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    })
    let out = ""
    child.stdout!.on("data", (chunk) => (out += String(chunk)))
    const pending = new Map<number, (outcome: Outcome) => void>()
    let next = 0
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    exited.then(() => {
      for (const [, settle] of pending) settle({ ok: false, error: { _tag: "RunnerExited" } })
      pending.clear()
      reject(
        new Error(
          `runner on port ${options.port} exited before it was ready (code ${child.exitCode}, signal ` +
            `${child.signalCode}): ${out.slice(-2000)}`
        )
      )
    })
    const send = (op: string, ...args: Array<unknown>) => {
      const id = next++
      const outcome = new Promise<Outcome>((settle) => pending.set(id, settle))
      if (child.connected) child.send({ id, op, args })
      return { id, outcome }
    }
    child.on("message", (raw: any) => {
      if (raw.ready !== undefined) {
        resolve({
          port: options.port,
          pid: child.pid!,
          group: raw.ready.group,
          child,
          stdout: () => out,
          send,
          call: (op, ...args) => send(op, ...args).outcome,
          request: (name, id, args, requestOptions) => send("request", name, id, args, requestOptions).outcome,
          interrupt: (callId) => child.connected && child.send({ id: -1, op: "interrupt", args: [callId] }),
          exited,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
            await exited
          }
        })
        return
      }
      const settle = pending.get(raw.id)
      pending.delete(raw.id)
      settle?.(raw.exit)
    })
  })

/** The cluster layer of the test process itself: a client-only process. */
export const clientLayer = (storage: Storage): Layer.Layer<McpWorkers | McpClusterTag, unknown> =>
  McpCluster.layer({ refreshInterval: Duration.millis(500) }).pipe(
    Layer.provide(sqlLayer(storage.kind, storage.target))
  )

/** A fresh log file for the stateful fixture, and the config that writes to it. */
export const loggedServer = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-cluster-"))
  const file = path.join(dir, "server.log")
  return {
    file,
    config: { command: process.execPath, args: [fixturePath("stateful"), "--log-file", file] },
    lines: (): Array<{ event: string; id: string | number; name?: string; token?: string | null }> =>
      fs.existsSync(file)
        ? fs
            .readFileSync(file, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line))
        : [],
    remove: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A TCP proxy to `target` on 127.0.0.1; `block()` stops forwarding (bytes are dropped, nothing is closed). */
export const startProxy = async (target: number, port: number) => {
  let blocked = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target, "127.0.0.1")
    sockets.add(inbound).add(outbound)
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on("data", (chunk) => {
        if (!blocked) to.write(chunk)
      })
    forward(inbound, outbound)
    forward(outbound, inbound)
    const end = () => {
      inbound.destroy()
      outbound.destroy()
      sockets.delete(inbound)
      sockets.delete(outbound)
    }
    inbound.on("error", end).on("close", end)
    outbound.on("error", end).on("close", end)
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    block: () => {
      blocked = true
    },
    unblock: () => {
      blocked = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
