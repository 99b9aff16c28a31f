// The packages as a user gets them: both tarballs from `npm pack`, installed into a fresh project next to the
// newest published patch releases of their peers (not the versions this repository pins), and used from plain
// `node` — no TypeScript loader, no workspace links, no aliases. Needs the npm registry.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { fixturePath } from "../fixtures/servers.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

// npm run from `npm test` exports its own settings as npm_* variables; the fresh project must not inherit them.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))

/** Runs a command to its end; fails with its output unless it exits 0. Killed if the test is interrupted. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  Effect.async<string, Error>((resume) => {
    const child = spawn(command, args, { cwd, env: cleanEnv, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code, signal) =>
      resume(
        code === 0
          ? Effect.succeed(stdout)
          : Effect.fail(new Error(`${command} ${args.join(" ")}: exit ${code ?? signal}\n${stdout}\n${stderr}`))
      )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mcpw-pack-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const readJson = (file: string): any => JSON.parse(fs.readFileSync(file, "utf8"))

/** The newest published version in `range` (`npm view` answers a string for one match, an array for many). */
const newest = (name: string, range: string, cwd: string) =>
  Effect.map(run("npm", ["view", `${name}@${range}`, "version", "--json"], cwd), (out) => {
    const versions: string | Array<string> = JSON.parse(out)
    return typeof versions === "string" ? versions : versions[versions.length - 1]!
  })

// Plain ESM, as a user's program: the barrel and a subpath of core must be one module, internals are closed.
const probe = `
import * as Core from "@mcp-worker/core"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { NodeMcpWorkers } from "@mcp-worker/node"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"

// Tools read a package's version through its package.json; the exports map must let them.
const require = createRequire(import.meta.url)
const manifests = ["core", "node"].map((name) => require(require.resolve(\`@mcp-worker/\${name}/package.json\`)).name)
const internalClosed = await import("@mcp-worker/node/internal/host").then(
  () => false,
  (error) => error.code === "ERR_PACKAGE_PATH_NOT_EXPORTED"
)
const [command, ...args] = JSON.parse(process.argv[2])
const program = Effect.gen(function* () {
  const workers = yield* McpWorkers
  const id = yield* workers.open({ command, args })
  const result = yield* workers.callTool(id, "echo", { token: "x" })
  const closed = yield* workers.close(id)
  return { token: result.structuredContent?.token ?? null, cleanup: closed.cleanup }
})
const outcome = await Effect.runPromise(Effect.provide(program, NodeMcpWorkers.layer()))
console.log(JSON.stringify({ ...outcome, sameTag: Core.McpWorkers.McpWorkers === McpWorkers, internalClosed, manifests }))
`

describe("npm pack", () => {
  it.scopedLive(
    "both tarballs install next to the newest peer patches and run a stdio worker from plain node",
    () =>
      Effect.gen(function* () {
        // JS and .d.ts of both packages; the owner bundle is built by the suite's globalSetup.
        yield* run(
          process.execPath,
          [
            path.join(root, "node_modules/typescript/bin/tsc"),
            "-b",
            "packages/caller",
            "packages/core",
            "packages/node"
          ],
          root
        )
        for (const file of ["owner.cjs", "owner-process.cjs", "owner-runtime.cjs"]) {
          assert.isTrue(fs.existsSync(path.join(root, "packages/node/owner", file)), file)
        }

        const dir = yield* tempDir
        const packed: Array<{ name: string; filename: string; files: Array<{ path: string }> }> = JSON.parse(
          yield* run(
            "npm",
            [
              "pack",
              "--workspace",
              "packages/caller",
              "--workspace",
              "packages/core",
              "--workspace",
              "packages/node",
              "--pack-destination",
              dir,
              "--json"
            ],
            root
          )
        )
        const caller = packed.find((pack) => pack.name === "@mcp-worker/caller")!
        const core = packed.find((pack) => pack.name === "@mcp-worker/core")!
        const node = packed.find((pack) => pack.name === "@mcp-worker/node")!
        const paths = (pack: (typeof packed)[number]) => pack.files.map((file) => file.path)
        assert.includeMembers(paths(core), ["dist/index.js", "dist/index.d.ts", "dist/McpWorkers.d.ts"])
        assert.includeMembers(paths(node), [
          "dist/index.js",
          "dist/index.d.ts",
          "dist/internal/host/ownerThread.js",
          "owner/owner.cjs",
          "owner/owner-process.cjs",
          "owner/owner-runtime.cjs"
        ])
        // C67: no V8 code cache ships; each Node's first owner writes its own into the user's cache directory.
        assert.deepStrictEqual(
          paths(node).filter((file) => file.endsWith(".cache")),
          []
        )

        // Every peer range either package declares, resolved to the newest published release in it.
        const peers = new Map<string, string>()
        for (const pkg of ["core", "node"]) {
          for (const [name, range] of Object.entries<string>(
            readJson(path.join(root, "packages", pkg, "package.json")).peerDependencies
          )) {
            peers.set(name, range)
          }
        }
        const wanted = Object.fromEntries(
          yield* Effect.forEach([...peers], ([name, range]) =>
            Effect.map(newest(name, range, dir), (v) => [name, v] as const)
          )
        )

        const app = path.join(dir, "app")
        fs.mkdirSync(app)
        yield* run("npm", ["init", "-y"], app)
        yield* run("npm", ["pkg", "set", "type=module"], app)
        yield* run(
          "npm",
          [
            "install",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            path.join(dir, caller.filename),
            path.join(dir, core.filename),
            path.join(dir, node.filename),
            ...Object.entries(wanted).map(([name, version]) => `${name}@${version}`)
          ],
          app
        )
        for (const [name, version] of Object.entries(wanted)) {
          assert.strictEqual(readJson(path.join(app, "node_modules", name, "package.json")).version, version, name)
        }
        // The node package's dependency on core is met by the packed core, not by a second copy from elsewhere.
        assert.isFalse(fs.existsSync(path.join(app, "node_modules/@mcp-worker/node/node_modules/@mcp-worker/core")))
        assert.isFalse(fs.existsSync(path.join(app, "node_modules/@mcp-worker/core/node_modules/@mcp-worker/caller")))

        fs.writeFileSync(path.join(app, "probe.mjs"), probe)
        const server = JSON.stringify([process.execPath, fixturePath("stateful")])
        const out = yield* run(process.execPath, ["probe.mjs", server], app)
        const result = JSON.parse(out.trim().split("\n").pop()!)
        assert.strictEqual(result.token, "x")
        assert.strictEqual(result.cleanup.activeProcesses, 0)
        assert.isTrue(result.sameTag)
        assert.isTrue(result.internalClosed)
        assert.deepStrictEqual(result.manifests, ["@mcp-worker/core", "@mcp-worker/node"])
      }),
    240_000
  )
})
