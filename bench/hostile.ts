// `npm run bench:hostile`: a host process (test/fixtures/listen-host.ts, default listener options) against hostile
// peers that each write a frame that never ends, 24 and then 1,024 of them (the connection bound): without a grant,
// 15 MiB (closed at the 4 KiB grantless bound, C47) and just under that bound (held, each an open connection with an
// unfinished frame), and with a grant, 15 MiB (held under the 256 MiB budget, C63). Prints the host's RSS (from /proc)
// before and after each wave, and how many peers it left open.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { grantlessFrameBytes } from "../packages/node/src/internal/listen/frames.js"
import { hello } from "../packages/node/src/internal/listen/frames.js"

const MiB = 1024 * 1024
/** What each peer writes of its frame: 15 MiB, or what stays under the grantless bound. */
const sizes = { big: 15 * MiB, grantless: grantlessFrameBytes - 96 }

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const filler = Buffer.alloc(MiB, "x")
const head = (id: string) =>
  `{"_tag":"Request","id":"1","tag":"callTool","payload":{"id":${JSON.stringify(id)},"params":"{\\"name\\":\\"echo\\",\\"arguments\\":{\\"token\\":\\"`

/**
 * One peer: `bytes` of its frame written (the socket took them) or its connection closed by the host. A connect the
 * accept backlog refuses (`EAGAIN`: the host accepts more slowly than peers connect) is tried again.
 */
const peer = (socket: string, id: string, bytes: number): Promise<net.Socket> =>
  new Promise<net.Socket>((resolve) => {
    const conn = net.createConnection(socket)
    let connected = false
    conn.on("error", (error: NodeJS.ErrnoException) => {
      if (connected || error.code !== "EAGAIN") return
      conn.removeAllListeners("close")
      setTimeout(() => resolve(peer(socket, id, bytes)), 10)
    })
    conn.once("close", () => resolve(conn))
    conn.once("connect", () => {
      connected = true
      // Past the handshake (C110), as a peer that means to reach the protocol's bounds.
      conn.write(hello(1))
      const first = head(id)
      conn.write(first)
      let left = bytes - first.length
      while (left > MiB) {
        conn.write(filler)
        left -= MiB
      }
      // A write the host's close cut off fails before the socket may say it is destroyed.
      conn.write(filler.subarray(0, left), (error) => (error == null ? resolve(conn) : (conn.destroy(), resolve(conn))))
    })
  })

/** Waits until the open peers stop changing for a second: the host has read what the kernel held for them. */
const settled = async (conns: ReadonlyArray<net.Socket>) => {
  let open = -1
  for (;;) {
    const now = conns.filter((conn) => !conn.destroyed).length
    if (now === open) return now
    open = now
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

/** One wave against a fresh host process: its RSS before and after, and the peers it left open. */
const wave = async (count: number, granted: boolean, bytes: number, options: object) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-hostile-"))
  fs.chmodSync(dir, 0o700)
  const socket = path.join(dir, "host.sock")
  const host = spawn(
    process.execPath,
    ["--import", "tsx", "test/fixtures/listen-host.ts", socket, JSON.stringify(options)],
    {
      stdio: ["ignore", "pipe", "inherit"]
    }
  )
  const exited = new Promise((resolve) => host.once("exit", resolve))
  try {
    const grant = await new Promise<string>((resolve) =>
      createInterface({ input: host.stdout! }).on("line", (line) => {
        if (line.startsWith("READY ")) resolve(line.slice("READY ".length))
      })
    )
    const before = rssMiB(host.pid!)
    // In groups, so that the socket's accept backlog does not refuse connections before the host sees them.
    const conns: Array<net.Socket> = []
    for (let at = 0; at < count; at += 64) {
      const group = Math.min(64, count - at)
      conns.push(
        ...(await Promise.all(
          Array.from({ length: group }, () => peer(socket, granted ? grant : "mcpg_forged", bytes))
        ))
      )
    }
    const open = await settled(conns)
    const after = rssMiB(host.pid!)
    for (const conn of conns) conn.destroy()
    const frame = bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes} B`
    return `| ${count} | ${granted ? "valid" : "none"} | ${frame} | ${before.toFixed(0)} MiB | ${after.toFixed(0)} MiB | ${open} |`
  } finally {
    host.kill("SIGKILL")
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const rows = ["| peers | grant | frame | host RSS before | after | open after |", "|---|---|---|---|---|---|"]
const only = process.env.HOSTILE_WAVES?.split(",")
// The peers held under the grantless bound send nothing more: the host's idle bound (10 s) would close the first of
// 1,024 before the last connect on a loaded machine, where a peer that trickles a byte now and then is never idle. So
// that wave's host waits a minute, to measure them all at once.
const waves = [
  ["grantless-big", false, sizes.big, {}],
  ["grantless", false, sizes.grantless, { idleTimeout: "60 seconds" }],
  ["granted", true, sizes.big, {}]
] as const
for (const count of [24, 1024]) {
  for (const [name, granted, bytes, options] of waves) {
    if (only === undefined || only.includes(name)) rows.push(await wave(count, granted, bytes, options))
  }
}
process.stdout.write(rows.join("\n") + "\n")
