/**
 * Sandboxed code in other processes reuses one stateful worker, knowing only a socket path and a grant. The host
 * listens (`NodeMcpWorkers.layerListen`), opens the example server, grants the sandboxes `increment` alone, and runs
 * three sandbox processes in a row (`sandbox.ts`, here `node --import tsx`; in production a `node --permission` child,
 * a container or a microVM on the same machine). The count carries over from one process to the next.
 *
 * Run: npx tsx examples/sandbox/host.ts
 */
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { exampleServer } from "../config.js"

const here = path.dirname(fileURLToPath(import.meta.url))
// A directory of this user's only (0700): whoever may enter it may connect.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-example-"))
const socket = path.join(dir, "host.sock")

const runSandbox = (grant: string) =>
  Effect.async<string, Error>((resume) => {
    // The sandbox gets the socket path and the grant as plain data: here, two environment variables.
    execFile(
      process.execPath,
      ["--import", "tsx", path.join(here, "sandbox.ts")],
      { env: { ...process.env, MCP_SOCKET: socket, MCP_GRANT: grant } },
      (error, stdout) => resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim()))
    )
  })

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const grants = yield* McpGrants.McpGrants
  const id = yield* workers.open(exampleServer)
  const grant = yield* grants.grant(id, { tools: ["increment"], ttl: "5 minutes" })
  for (const run of [1, 2, 3]) console.log(`sandbox ${run}:`, yield* runSandbox(grant))
  yield* grants.revoke(grant)
  console.log("after revoke:", yield* runSandbox(grant))
})

Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerListen({ path: socket })))).finally(() =>
  fs.rmSync(dir, { recursive: true, force: true })
)
