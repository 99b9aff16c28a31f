#!/usr/bin/env node
// C19, C138
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as NodeMcpWorkers from "../nodeMcpWorkers.js"
import { layerServe, McpServe } from "./layer.js"

/** @internal */
export const usage = `Usage: mcp-worker serve <config.json> [--http] [--port <n>] [--grant-file <path>] [--format <format>]

Opens every server of a config document (Claude Desktop's "mcpServers", VS Code's "servers", a project .mcp.json)
as a live worker and serves them as one MCP server, each tool as <server>__<tool>.

  (default)            serve one client on stdio: a desktop app spawns this command
  --http               serve streamable HTTP on 127.0.0.1; prints {"url", "grantFile"} as one JSON line, and
                       writes the bearer grant to the grant file (mode 0600)
  --port <n>           the HTTP port (default: a free one)
  --grant-file <path>  where the grant is written (default: in a new private directory)
  --format <format>    claude-desktop, cursor, vscode or mcp-json (default: vscode when the file has "servers",
                       else mcp-json)
  --help               this text

SIGINT or SIGTERM (or the end of stdin, on stdio) closes every worker and confirms its processes are gone. After a
SIGKILL the host's reaper ends every server; the grant file is left, holding a grant nothing honours.`

/** @internal */
export interface Args {
  readonly config: string
  readonly http: boolean
  readonly port: number
  readonly grantFile: string | undefined
  readonly format: McpConfig.Format | undefined
}

const formats: ReadonlyArray<string> = ["claude-desktop", "cursor", "vscode", "mcp-json"]

/** @internal */
export const parseArgs = (argv: ReadonlyArray<string>): Either.Either<Args | "help", string> => {
  if (argv.includes("--help") || argv.includes("-h")) return Either.right("help")
  const [command, config, ...rest] = argv
  if (command !== "serve" || config === undefined || config.startsWith("--")) {
    return Either.left("expected: mcp-worker serve <config.json>")
  }
  const args: { -readonly [K in keyof Args]: Args[K] } = {
    config,
    http: false,
    port: 0,
    grantFile: undefined,
    format: undefined
  }
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!
    const value = rest[i + 1]
    if (flag === "--http") args.http = true
    else if (flag === "--port" && value !== undefined && /^\d{1,5}$/.test(value)) ((args.port = Number(value)), i++)
    else if (flag === "--grant-file" && value !== undefined) ((args.grantFile = path.resolve(value)), i++)
    else if (flag === "--format" && value !== undefined && formats.includes(value))
      ((args.format = value as McpConfig.Format), i++)
    else return Either.left(`unknown or incomplete option ${JSON.stringify(flag)}`)
  }
  return Either.right(args)
}

const readDocument = (args: Args) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => fs.readFileSync(args.config, "utf8"),
      catch: () => `cannot read ${args.config}`
    })
    const format = args.format ?? (/"servers"\s*:/.test(text) ? "vscode" : "mcp-json")
    return yield* Either.mapLeft(McpConfig.read(text, format), (error) => `${args.config}: ${error.message}`)
  })

/** C146 */
const grantFileOf = (args: Args, grant: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const file = args.grantFile ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-worker-serve-")), "grant")
      fs.writeFileSync(file, grant, { mode: 0o600 })
      fs.chmodSync(file, 0o600)
      return file
    }),
    (file) =>
      Effect.sync(() =>
        fs.rmSync(args.grantFile === undefined ? path.dirname(file) : file, { force: true, recursive: true })
      )
  )

/** C19 */
const closeAll = (opened: OpenAll.OpenAllResult<unknown>) =>
  Effect.flatMap(McpWorkers, (workers) => workers.closeAll(opened)).pipe(
    Effect.flatMap((closed) =>
      Effect.forEach(Object.entries(closed), ([name, result]) =>
        Console.error(
          result._tag === "Closed"
            ? `${name}: closed, its processes gone`
            : `${name}: close not confirmed: ${result.error.message}`
        )
      )
    )
  )

const openedWorkers = (document: McpConfig.Document) =>
  Effect.gen(function* () {
    const workers = yield* McpWorkers
    const opened = yield* workers.openAll(document, { environment: process.env })
    yield* Effect.addFinalizer(() => closeAll(opened))
    for (const [name, error] of Object.entries(OpenAll.failures(opened))) {
      yield* Console.error(`${name}: not opened: ${error.message}`)
    }
    return OpenAll.ids(opened)
  })

const program = (args: Args) =>
  Effect.gen(function* () {
    const document = yield* readDocument(args)
    const ids = yield* openedWorkers(document)
    if (Object.keys(ids).length === 0) return yield* Effect.fail("no server of the document opened")
    const serve = yield* McpServe
    const grant = yield* serve.grant(ids)
    if (!args.http) return yield* serve.serveStdio(grant)
    const grantFile = yield* grantFileOf(args, grant)
    yield* Console.log(JSON.stringify({ url: serve.url, grantFile }))
    return yield* Effect.never
  })

const main = (argv: ReadonlyArray<string>) => {
  const parsed = parseArgs(argv)
  if (Either.isLeft(parsed)) {
    process.stderr.write(`mcp-worker: ${parsed.left}\n\n${usage}\n`)
    process.exitCode = 2
    return
  }
  if (parsed.right === "help") return void process.stdout.write(`${usage}\n`)
  const args = parsed.right
  const layer = layerServe(args.http ? { http: { port: args.port } } : {}).pipe(
    Layer.provideMerge(NodeMcpWorkers.layerWithView())
  )
  // On stdio, stdout is the MCP channel.
  NodeRuntime.runMain(
    Effect.scoped(program(args)).pipe(
      Effect.provide(layer),
      Effect.tapError((error) => Console.error(`mcp-worker: ${typeof error === "string" ? error : error.message}`))
    ),
    { disableErrorReporting: true }
  )
}

main(process.argv.slice(2))
