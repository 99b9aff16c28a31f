// A private Postgres for one test file: initdb in a temp dir, started on 127.0.0.1 on a free port with pg_ctl,
// stopped and removed afterwards. As root it runs as the `postgres` user (initdb refuses root). The binaries come
// from PATH or Debian's /usr/lib/postgresql/<version>/bin (.ci/run installs the package on a fresh machine).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

// Debian's versioned directory first, then PATH (scripts/postgres.sh looks in the same order).
const binDir = (): string | undefined => {
  const base = "/usr/lib/postgresql"
  if (fs.existsSync(base)) {
    const versions = fs.readdirSync(base).sort((x, y) => Number(y) - Number(x))
    for (const version of versions) {
      const dir = path.join(base, version, "bin")
      if (fs.existsSync(path.join(dir, "initdb"))) return dir
    }
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir !== "" && fs.existsSync(path.join(dir, "initdb")) && fs.existsSync(path.join(dir, "pg_ctl"))) return dir
  }
  return undefined
}

export const postgresAvailable = (): boolean => binDir() !== undefined

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

export interface Postgres {
  readonly url: string
  readonly stop: () => void
}

export const startPostgres = async (): Promise<Postgres> => {
  const bin = binDir()
  if (bin === undefined) throw new Error("no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-pg-"))
  const data = path.join(dir, "data")
  const asRoot = process.getuid?.() === 0
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir])
  const run = (command: string, args: Array<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, command), ...args], { stdio: "pipe" })
      : execFileSync(path.join(bin, command), args, { stdio: "pipe" })
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=100`
  run("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-t", "30", "start"])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
