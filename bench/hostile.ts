// `npm run bench:hostile`: a host process (test/fixtures/listen-host.ts, default listener options) against hostile
// peers that each write 15 MiB of a frame that never ends, 24 and then 1,024 of them (the connection bound): without a
// grant (closed at the 4 KiB grantless bound, C47) and with one (held under the 256 MiB budget, C63). Prints the host's
// RSS (from /proc) before and after each wave, and how many peers it left open.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"

const MiB = 1024 * 1024
const frameMiB = 15

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const filler = Buffer.alloc(MiB, "x")
const head = (id: string) =>
  `{"_tag":"Request","id":"1","tag":"callTool","payload":{"id":${JSON.stringify(id)},"params":"{\\"name\\":\\"echo\\",\\"arguments\\":{\\"token\\":\\"`

/** One peer: its 15 MiB written (the socket took them) or its connection closed by the host. */
const peer = (socket: string, id: string) =>
  new Promise<net.Socket>((resolve) => {
    const conn = net.createConnection(socket)
    conn.on("error", () => {})
    conn.once("close", () => resolve(conn))
    conn.once("connect", () => {
      conn.write(head(id))
      for (let i = 1; i < frameMiB; i++) conn.write(filler)
      conn.write(filler, () => resolve(conn))
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
const wave = async (count: number, granted: boolean) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-bench-hostile-"))
  fs.chmodSync(dir, 0o700)
  const socket = path.join(dir, "host.sock")
  const host = spawn(process.execPath, ["--import", "tsx", "test/fixtures/listen-host.ts", socket], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const exited = new Promise((resolve) => host.once("exit", resolve))
  try {
    const grant = await new Promise<string>((resolve) =>
      createInterface({ input: host.stdout! }).on("line", (line) => {
        if (line.startsWith("READY ")) resolve(line.slice("READY ".length))
      })
    )
    const before = rssMiB(host.pid!)
    const conns = await Promise.all(Array.from({ length: count }, () => peer(socket, granted ? grant : "mcpg_forged")))
    const open = await settled(conns)
    const after = rssMiB(host.pid!)
    for (const conn of conns) conn.destroy()
    return `| ${count} | ${granted ? "valid" : "none"} | ${before.toFixed(0)} MiB | ${after.toFixed(0)} MiB | ${open} |`
  } finally {
    host.kill("SIGKILL")
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const rows = ["| peers | grant | host RSS before | after | open after |", "|---|---|---|---|---|"]
for (const count of [24, 1024]) for (const granted of [false, true]) rows.push(await wave(count, granted))
process.stdout.write(rows.join("\n") + "\n")
