// Two runners and a client-only process of @mcp-worker/cluster on 127.0.0.1, over a private Postgres started for
// the run (the tests' helper: initdb and pg_ctl in a temp dir, stopped at the end). Runner A opens the bundled
// example server; runner B and the client use it by id. Run: npm run build:owner && npx tsx examples/cluster/main.ts
import { fork } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as PgClient from "@effect/sql-pg/PgClient"
import { McpCluster } from "@mcp-worker/cluster"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const role = process.argv[2]

const layerFor = (url: string, port?: number) =>
  McpCluster.layer(port === undefined ? {} : { runner: { host: "127.0.0.1", port } }).pipe(
    Layer.provide(PgClient.layer({ url: Redacted.make(url) }))
  )

if (role === "runner") {
  // A runner: opens the example server when asked, then serves until its parent goes.
  const [url, port] = [process.argv[3]!, Number(process.argv[4])]
  await Effect.runPromise(
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const id =
        process.argv[5] === "open"
          ? yield* workers.open({ command: "npx", args: ["tsx", path.join(root, "examples/server.ts")] })
          : null
      process.send?.({ ready: true, id })
      yield* Effect.async<void>((resume) => {
        process.once("disconnect", () => resume(Effect.void))
      })
    }).pipe(Effect.scoped, Effect.provide(layerFor(url, port)))
  )
} else {
  const postgres = path.join(root, "test/cluster/postgres.ts")
  const { freePort, startPostgres } = (await import(postgres)) as {
    freePort: () => Promise<number>
    startPostgres: () => Promise<{ url: string; stop: () => void }>
  }
  const pg = await startPostgres()
  const start = async (open: boolean) => {
    const child = fork(
      fileURLToPath(import.meta.url),
      ["runner", pg.url, String(await freePort()), open ? "open" : ""],
      {
        execArgv: ["--import", "tsx"]
      }
    )
    const id = await new Promise<string | null>((resolve) => child.once("message", (m: any) => resolve(m.id)))
    return { child, id }
  }
  try {
    const [a, b] = await Promise.all([start(true), start(false)])
    console.log("opened on runner A:", a.id)
    await Effect.runPromise(
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const tools = yield* workers.listTools(a.id!, { timeout: "10 seconds" })
        console.log("tools, from a client-only process:", tools.tools.map((tool) => tool.name).join(", "))
        const status = yield* workers.status(a.id!)
        console.log("owned by", status.runner)
        const closed = yield* workers.close(a.id!)
        console.log("closed from the client, processes left on A's machine:", closed.cleanup?.activeProcesses)
      }).pipe(Effect.provide(layerFor(pg.url)))
    )
    for (const runner of [a, b]) runner.child.disconnect()
    await Promise.all([a, b].map((r) => new Promise((resolve) => r.child.once("exit", resolve))))
  } finally {
    pg.stop()
  }
}
