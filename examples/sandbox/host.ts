/**
 * Sandboxed code in other processes reuses one stateful worker, knowing only a socket path and a grant. The host
 * listens (`NodeMcpWorkers.layerListen`), opens the example server, grants the sandboxes `increment` alone, and runs
 * sandbox processes in a row (`sandbox.mjs`: plain JavaScript and `@mcp-worker/caller`, a package without
 * dependencies): three under Node, then one under Deno and one under Bun where they are installed (in production a
 * `node --permission` child, a Deno or Bun sandbox, a container or a microVM on the same machine). The count carries
 * over from one process to the next.
 *
 * Run: npm run demo:sandbox
 */
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { exampleServer } from "../config.js"

const here = path.dirname(fileURLToPath(import.meta.url))
// A directory of this user's only (0700): whoever may enter it may connect.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-example-"))
const socket = path.join(dir, "host.sock")

const sandbox = path.join(here, "sandbox.mjs")

// The runtimes a sandbox runs under: Node always; Deno and Bun from their npm packages, where installed. Deno may read
// two variables and connect to the socket (a Unix socket needs read, write and net on its path there), nothing else.
const platformBinary = (name: string, file: string): string | undefined => {
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), file)
  } catch {
    return undefined
  }
}
const require = createRequire(import.meta.url)
const deno = platformBinary(`@deno/${process.platform}-${process.arch}-glibc`, "deno")
const bun = platformBinary(`@oven/bun-${process.platform}-${process.arch === "arm64" ? "aarch64" : "x64"}`, "bin/bun")
const runtimes: ReadonlyArray<readonly [name: string, argv: ReadonlyArray<string>]> = [
  ["node", [process.execPath, sandbox]],
  ["node", [process.execPath, sandbox]],
  ["node", [process.execPath, sandbox]],
  ...(deno === undefined
    ? []
    : [
        [
          "deno",
          [
            deno,
            "run",
            "--allow-env=MCP_SOCKET,MCP_GRANT",
            `--allow-read=${socket}`,
            `--allow-write=${socket}`,
            `--allow-net=unix:${socket}`,
            sandbox
          ]
        ] as const
      ]),
  ...(bun === undefined ? [] : [["bun", [bun, sandbox]] as const])
]

const runSandbox = (argv: ReadonlyArray<string>, grant: string) =>
  Effect.async<string, Error>((resume) => {
    // The sandbox gets the socket path and the grant as plain data: here, two environment variables.
    execFile(
      argv[0]!,
      argv.slice(1),
      { env: { ...process.env, MCP_SOCKET: socket, MCP_GRANT: grant } },
      (error, stdout) => resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim()))
    )
  })

const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const grants = yield* McpGrants.McpGrants
  const id = yield* workers.open(exampleServer)
  const grant = yield* grants.grant(id, { tools: ["increment"], ttl: "5 minutes" })
  for (const [i, [name, argv]] of runtimes.entries())
    console.log(`sandbox ${i + 1} (${name}):`, yield* runSandbox(argv, grant))
  yield* grants.revoke(grant)
  console.log("after revoke:", yield* runSandbox(runtimes[0]![1], grant))
})

Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerListen({ path: socket })))).finally(() =>
  fs.rmSync(dir, { recursive: true, force: true })
)
