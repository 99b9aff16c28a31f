// The packages as a user meets them: packed (each package's prepack builds it), installed with the README's own
// install commands into new projects outside the repository, and the README's first program of each face run against
// a real server from a read-only install (C67), ending by itself with nothing left running.
import { assert, describe, it } from "@effect/vitest"
import * as SqliteStorage from "@mcp-worker/cluster/SqliteStorage"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { sqliteLoadable } from "../cluster/sqlite.js"
import * as Packed from "./packed.js"
// @ts-expect-error plain ESM build script without types
import { packageReadme } from "../../scripts/packageReadme.mjs"

const require = createRequire(import.meta.url)
const names = ["caller", "core", "node", "cluster", "effect4"] as const
const manifests = Object.fromEntries(
  names.map((name) => [name, Packed.readJson(Path.join(Packed.root, "packages", name, "package.json"))])
)
const tarballName = (name: string) => `mcp-worker-${name}-${manifests[name].version}.tgz`
const installFlags = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]

// Bounds for packing and installing on a loaded machine with a warm cache, far past the ~30 s each takes.
const minutes = (n: number) => n * 60_000

// The Node an Effect 4 application runs on: this one when it meets the package's engines, else the pinned 22.
const effect4Node = (): Effect.Effect<string> => {
  if (isEffect4Node()) return Effect.succeed(process.execPath)
  return Packed.run(Path.join(Packed.root, "scripts/node-runtimes.sh"), ["22"], {
    cwd: Packed.root,
    timeoutMs: minutes(2)
  }).pipe(Effect.map(({ stdout }) => Path.join(stdout.trim(), "node")))
}

const pack = Effect.gen(function* () {
  const dir = yield* Packed.temporaryDirectory("mcp-worker-packs-")
  const destination = ["--pack-destination", dir, "--loglevel=error"]
  const workspaces = ["caller", "core", "node", "cluster"].flatMap((name) => ["-w", `packages/${name}`])
  yield* Packed.run("npm", ["pack", ...workspaces, ...destination], { cwd: Packed.root, timeoutMs: minutes(3) })
  yield* Packed.run("npm", ["pack", ...destination], {
    cwd: Path.join(Packed.root, "packages/effect4"),
    timeoutMs: minutes(3)
  })
  return dir
})

const entriesOf = (tarball: string) =>
  Packed.run("tar", ["-tzf", tarball], { cwd: Path.dirname(tarball), timeoutMs: 30_000 }).pipe(
    Effect.map(({ stdout }) => stdout.split("\n").filter((line) => line !== ""))
  )

const fileOf = (tarball: string, entry: string) =>
  Packed.run("tar", ["-xzOf", tarball, entry], { cwd: Path.dirname(tarball), timeoutMs: 30_000 }).pipe(
    Effect.map(({ stdout }) => stdout)
  )

// What each tarball must hold beyond README, LICENSE and package.json: its entry, and the bundles with their maps.
const expectedFiles: Record<(typeof names)[number], Array<string>> = {
  caller: ["dist/index.js", "dist/index.d.ts", "dist/Operations.js"],
  core: ["dist/index.js", "dist/index.d.ts"],
  node: ["dist/index.js", "dist/index.d.ts", "owner/owner.cjs", "owner/owner-process.cjs", "owner/owner-runtime.cjs"],
  cluster: ["dist/index.js", "dist/SqliteStorage.js"],
  effect4: [
    "dist/index.js",
    "owner/owner.cjs",
    "owner/owner-process.cjs",
    "owner/owner-runtime.cjs",
    "lib/effect3/bundle/implementation.mjs",
    "lib/effect3/bundle/client.mjs"
  ]
}

/** The README's `command` as arguments after `npm`. */
const commandWords = (command: Packed.Command): Array<string> => {
  const words = Packed.readmeCommands()[command]
  assert.isDefined(words, `README's Install section has a command for ${command}`)
  return words!
}

/** An `npm install` line run in the project, the tarballs in place of our package names. */
const installWords = (project: string, words: ReadonlyArray<string>, node: string, flags: Array<string> = []) => {
  const argv = words.map((word) =>
    /^@mcp-worker\/[a-z0-9]+$/.test(word) ? Path.join(packs, tarballName(word.split("/")[1]!)) : word
  )
  // core's own dependency, which the registry would give: its tarball, as the packages are not published from here.
  if (words.some((word) => /^@mcp-worker\/(core|node|cluster)$/.test(word)))
    argv.push(Path.join(packs, tarballName("caller")))
  return Packed.run("npm", [...argv, ...installFlags, ...flags], {
    cwd: project,
    env: { ...process.env, PATH: `${Path.dirname(node)}${Path.delimiter}${process.env.PATH}` },
    timeoutMs: minutes(3)
  })
}

/** The README's `command` run in the project. */
const install = (project: string, command: Packed.Command, node: string) =>
  installWords(project, commandWords(command), node)

/** A new project outside the repository with the README's `command` run in it. */
const installed = (command: Packed.Command, node: string) =>
  Effect.gen(function* () {
    const project = yield* Packed.temporaryDirectory("mcp-worker-install-")
    Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "first-program", private: true }))
    yield* install(project, command, node)
    return project
  })

// The cluster's first program: the across-machines command beside the Effect 3 one, with the SQLite peers its
// comment names, as one npm run. Its install scripts are not run: better-sqlite3 would compile for minutes; the addon
// this repository built for this Node (scripts/sqlite-bindings.sh, run here when it is missing, as the cluster's
// SQLite tests run it) is put where `bindings` looks for it instead.
const installedCluster = Effect.gen(function* () {
  const project = yield* Packed.temporaryDirectory("mcp-worker-install-")
  Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "first-program", private: true }))
  const words = [
    ...commandWords("Effect 3"),
    ...commandWords("across machines").slice(1),
    ...Object.values(SqliteStorage.optionalPeers)
  ]
  assert.isTrue(words.every((word) => !word.startsWith("-")))
  yield* installWords(project, words, process.execPath, ["--ignore-scripts"])
  const addon = Path.join(process.versions.node, process.platform, process.arch, "better_sqlite3.node")
  const built = Path.join(Packed.root, "node_modules/better-sqlite3/compiled", addon)
  const loadable = sqliteLoadable()
  assert.isTrue(loadable.ok, loadable.ok ? "" : loadable.reason)
  assert.isTrue(Fs.existsSync(built), `scripts/sqlite-bindings.sh has built better-sqlite3 for Node ${process.version}`)
  const version = (dir: string) => Packed.readJson(Path.join(dir, "node_modules/better-sqlite3/package.json")).version
  assert.strictEqual(version(project), version(Packed.root), "the built addon is of the better-sqlite3 npm installed")
  const target = Path.join(project, "node_modules/better-sqlite3/compiled", addon)
  Fs.mkdirSync(Path.dirname(target), { recursive: true })
  Fs.copyFileSync(built, target)
  return project
})

// The README's program with its one outside fetch, `npx -y` of server-everything, replaced by the same published
// server from this repository, started through a file of the project so that its command line names the project.
const localProgram = (project: string, name: Packed.Program): string => {
  const program = Packed.readmePrograms()[name]
  assert.isDefined(program, `README's Install section has a program for ${name}`)
  const fetched = 'command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"]'
  assert.strictEqual(program!.split(fetched).length, 2, `the ${name} program opens server-everything through npx`)
  const server = Path.join(project, "server-everything.mjs")
  const published = require.resolve("@modelcontextprotocol/server-everything/dist/index.js")
  Fs.writeFileSync(server, `await import(${JSON.stringify(published)})\n`)
  return program!.replace(fetched, `command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(server)}]`)
}

// What a program printed, less the records of Effect's default logger (the cluster's runner says where it listens):
// logfmt, one record a line but for newlines inside its quoted values.
const printed = (stdout: string) =>
  stdout.replace(/^timestamp=\S+ level=[A-Z]+ (?:[^"\n]|"(?:[^"\\]|\\.)*")*\n/gm, "").split("\n")

/** Runs the README's program from the project's install made read-only, and checks what it printed and left. */
const runProgram = (project: string, name: Packed.Program, node: string) =>
  Effect.gen(function* () {
    const main = `${name.replace(/\W+/g, "-").toLowerCase()}.mjs`
    Fs.writeFileSync(Path.join(project, main), localProgram(project, name))
    const modules = Path.join(project, "node_modules")
    const before = Packed.snapshot(modules)
    const { stderr, stdout } = yield* Effect.scoped(
      Effect.zipRight(
        Packed.readOnly(modules),
        Packed.run(node, [main], {
          cwd: project,
          env: { ...process.env, XDG_CACHE_HOME: Path.join(project, "cache") },
          timeoutMs: minutes(1)
        })
      )
    )
    assert.deepStrictEqual(printed(stdout), ["Echo: hello", ""], stderr)
    // C67: the owner wrote nothing into the install.
    assert.deepStrictEqual(Packed.snapshot(modules), before)
    // The program ended by itself (no thread, socket or timer kept it), and no process of its server is left.
    assert.deepStrictEqual(Packed.processesUnder(project), [])
  })

/** Every tarball unpacked where an install puts it, `node_modules/@mcp-worker/<name>`; answers `node_modules`. */
const unpacked = Effect.gen(function* () {
  const modules = Path.join(yield* Packed.temporaryDirectory("mcp-worker-unpacked-"), "node_modules")
  for (const name of names) {
    const dir = Path.join(modules, "@mcp-worker", name)
    Fs.mkdirSync(dir, { recursive: true })
    yield* Packed.run("tar", ["-xzf", Path.join(packs, tarballName(name)), "-C", dir, "--strip-components=1"], {
      cwd: dir,
      timeoutMs: 30_000
    })
  }
  return modules
})

const filesUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) =>
    Fs.statSync(Path.join(dir, file)).isFile()
  )

// Whether this Node meets @mcp-worker/effect4's engines (">=major.minor").
const isEffect4Node = () => {
  const [lowestMajor, lowestMinor] = manifests.effect4.engines.node.replace(">=", "").split(".").map(Number)
  const [major, minor] = process.versions.node.split(".").map(Number)
  return major! > lowestMajor || (major === lowestMajor && minor! >= (lowestMinor ?? 0))
}

// Packed once for the file (prepack builds each package); each face's command installed once, side by side, in its
// own project (the Effect 3 one serves programs without Effect too).
const shared = Effect.runSync(Scope.make())
let packs = ""
let effect3Project = ""
let effect4Project = ""
let effect4NodePath = ""
let clusterProject = ""
beforeAll(async () => {
  packs = await Effect.runPromise(pack.pipe(Scope.extend(shared)))
  effect4NodePath = await Effect.runPromise(effect4Node())
  ;[effect3Project, effect4Project, clusterProject] = await Effect.runPromise(
    Effect.all([installed("Effect 3", process.execPath), installed("Effect 4", effect4NodePath), installedCluster], {
      concurrency: "unbounded"
    }).pipe(Scope.extend(shared))
  )
}, minutes(8))
afterAll(() => Effect.runPromise(Scope.close(shared, Exit.void)), minutes(2))

// C98: the README's first programs type-check --strict as a user's project would check them, without @types/node; the
// errors left are other packages' declarations naming Node's types, which are not this repository's to change: the
// MCP SDK's `Buffer`, and (the cluster's types reach them through @effect/rpc's RpcSerialization) msgpackr's.
const othersNamingNode = [
  /^node_modules\/@modelcontextprotocol\/client\/dist\/[\w.-]+\(\d+,\d+\): error TS2580: Cannot find name 'Buffer'/,
  /^node_modules\/msgpackr\/index\.d\.cts\(\d+,\d+\): error TS2580: Cannot find name 'Buffer'/,
  /^node_modules\/msgpackr\/index\.d\.cts\(\d+,\d+\): error TS2307: Cannot find module 'stream'/
]
const typecheck = (project: string, names: ReadonlyArray<Packed.Program>) =>
  Effect.gen(function* () {
    const files = names.map((name) => {
      const file = `check-${name.replace(/\W+/g, "-").toLowerCase()}.mjs`
      Fs.writeFileSync(Path.join(project, file), Packed.readmePrograms()[name]!)
      return file
    })
    assert.isFalse(Fs.existsSync(Path.join(project, "node_modules/@types/node")), "the project has no @types/node")
    const tsc = require.resolve("typescript/bin/tsc")
    const flags = ["--strict", "--noEmit", "--allowJs", "--checkJs", "--module", "nodenext", "--target", "es2022"]
    const { stdout } = yield* Packed.run(process.execPath, [tsc, ...flags, ...files], {
      cwd: project,
      timeoutMs: minutes(2)
    }).pipe(Effect.catchAllDefect((defect) => Effect.succeed({ stdout: String(defect), stderr: "" })))
    const errors = stdout.split("\n").filter((line) => /error TS\d+/.test(line))
    const ours = errors.filter((line) => !othersNamingNode.some((allowed) => allowed.test(line)))
    assert.deepStrictEqual(ours, [])
  })

type Face = "Effect 3" | "Effect 4" | "cluster"

// A README `typecheck` block: a whole program, compiled in the project of the face it imports with its section's
// install lines run there too, and with Node's types (a TypeScript user has them; C98 checks their absence).
const blockGroups = () => {
  const blocks = Packed.readmeBlocks()
  const groups = new Map<string, { face: Face; lines: Array<Array<string>>; blocks: Array<Packed.Block> }>()
  for (const block of blocks.filter((b) => b.check?._tag === "typecheck")) {
    const face: Face = block.code.includes('from "@mcp-worker/effect4')
      ? "Effect 4"
      : block.code.includes('from "@mcp-worker/cluster')
        ? "cluster"
        : "Effect 3"
    const lines = blocks
      .filter((b) => b.section === block.section && b.check?._tag === "install")
      .flatMap((b) => Packed.installLines(b.code))
    const key = JSON.stringify([face, lines])
    const group = groups.get(key) ?? { face, lines, blocks: [] }
    groups.set(key, { ...group, blocks: [...group.blocks, block] })
  }
  return [...groups.values()]
}

const compileBlocks = (project: string, blocks: ReadonlyArray<Packed.Block>) =>
  Effect.gen(function* () {
    const files = blocks.map((block) => {
      const file = `readme-${block.line}.mts`
      Fs.writeFileSync(Path.join(project, file), block.code)
      return file
    })
    const tsc = require.resolve("typescript/bin/tsc")
    const types = ["--types", "node", "--typeRoots", Path.join(Packed.root, "node_modules/@types")]
    // The blocks' own code is checked here; the declarations of the packages, ours and others', are C98's.
    const flags = ["--strict", "--noEmit", "--skipLibCheck", "--module", "nodenext", "--target", "es2022", ...types]
    const { stdout } = yield* Packed.run(process.execPath, [tsc, ...flags, ...files], {
      cwd: project,
      timeoutMs: minutes(2)
    }).pipe(Effect.catchAllDefect((defect) => Effect.succeed({ stdout: String(defect), stderr: "" })))
    const errors = stdout.split("\n").filter((line) => /error TS\d+/.test(line))
    assert.deepStrictEqual(errors, [], `README lines ${blocks.map((block) => block.line).join(", ")}`)
  })

describe("packed and installed as the README says", () => {
  it.live("tarballs: README, LICENSE, repository; bundles with source maps; nothing written at run time", () =>
    Effect.gen(function* () {
      const rootManifest = Packed.readJson(Path.join(Packed.root, "package.json"))
      const license = Fs.readFileSync(Path.join(Packed.root, "LICENSE"), "utf8")
      const website = rootManifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "")
      for (const name of names) {
        const tarball = Path.join(packs, tarballName(name))
        const entries = new Set((yield* entriesOf(tarball)).map((entry) => entry.replace(/^package\//, "")))
        for (const file of ["README.md", "LICENSE", "package.json", ...expectedFiles[name]]) {
          assert.isTrue(entries.has(file), `${name} holds ${file}`)
        }
        for (const bundle of expectedFiles[name].filter((file) => /\.(cjs|mjs)$/.test(file))) {
          assert.isTrue(entries.has(`${bundle}.map`), `${name} holds a source map of ${bundle}`)
        }
        const manifest = JSON.parse(yield* fileOf(tarball, "package/package.json"))
        assert.strictEqual(manifest.license, "MIT")
        assert.deepStrictEqual(manifest.repository, { ...rootManifest.repository, directory: `packages/${name}` })
        assert.strictEqual(yield* fileOf(tarball, "package/LICENSE"), license)
        assert.include(yield* fileOf(tarball, "package/README.md"), `${website}#install`)
        const leftovers = [...entries].filter((file) => /\.cache$|\.tmp$|\.tsbuildinfo$/.test(file))
        assert.deepStrictEqual(leftovers, [], `${name} holds no file written at run time`)
      }
    })
  )

  // C96: what a tarball ships serves every Node and points at files an install holds.
  it.scopedLive(
    "C96: no code cache; every source map points into shipped sources, a fraction of its bundles' size",
    () =>
      Effect.gen(function* () {
        const modules = yield* unpacked
        for (const name of names) {
          const dir = Path.join(modules, "@mcp-worker", name)
          const files = filesUnder(dir)
          assert.deepStrictEqual(
            files.filter((file) => file.endsWith(".cache")),
            [],
            `${name} ships no V8 code cache`
          )
          const maps = files.filter((file) => file.endsWith(".map"))
          assert.isNotEmpty(maps, name)
          for (const map of maps) {
            const { sources, sourcesContent } = Packed.readJson(Path.join(dir, map))
            assert.isUndefined(sourcesContent, `${name}/${map} embeds no sources`)
            assert.isNotEmpty(sources, `${name}/${map} maps some source`)
            for (const source of sources) {
              const file = Path.resolve(Path.dirname(Path.join(dir, map)), source)
              // Inside the install: the package itself, or (for node's owner) the sibling core beside it.
              assert.isTrue(file.startsWith(modules + Path.sep) && Fs.existsSync(file), `${name}/${map}: ${source}`)
            }
          }
          // Positions into our own sources only: a fraction of the minified code they map (they were twice its size).
          const bytes = (files: Array<string>) =>
            files.reduce((sum, file) => sum + Fs.statSync(Path.join(dir, file)).size, 0)
          const bundles = expectedFiles[name].filter((file) => /\.(cjs|mjs)$/.test(file))
          if (bundles.length > 0)
            assert.isBelow(bytes(bundles.map((bundle) => `${bundle}.map`)), bytes(bundles) / 2, name)
        }
      })
  )

  it.scopedLive(
    "C96: each README shows the root README's install commands and first programs; package.json resolves",
    () =>
      Effect.gen(function* () {
        const modules = yield* unpacked
        const readme = Fs.readFileSync(Path.join(Packed.root, "README.md"), "utf8")
        const programs = Object.values(Packed.readmePrograms())
        const resolve = createRequire(Path.join(Path.dirname(modules), "program.js")).resolve
        for (const name of names) {
          const dir = Path.join(modules, "@mcp-worker", name)
          const shipped = Fs.readFileSync(Path.join(dir, "README.md"), "utf8")
          assert.strictEqual(shipped, `${packageReadme(readme, manifests[name])}\n`)
          assert.include(shipped, Packed.readmeCommandsBlock(), name)
          const command = Object.values(Packed.readmeCommands()).find((words) => words.includes(`@mcp-worker/${name}`))
          assert.include(shipped, `npm ${command!.join(" ")}\n`, name)
          // The first programs that import the package, each whole.
          for (const program of programs.filter((code) => code.includes(`from "@mcp-worker/${name}`))) {
            assert.include(shipped, `\`\`\`js\n${program}\`\`\``, name)
          }
          assert.strictEqual(resolve(`@mcp-worker/${name}/package.json`), Path.join(dir, "package.json"))
        }
      })
  )

  // One source: each range in a command is the one the package's peerDependencies name, and no required peer is
  // missing (the across-machines command is run beside the Effect 3 one).
  it("the README's commands name every required peer with the range in package.json", () => {
    const commands = Packed.readmeCommands()
    assert.deepStrictEqual(Object.keys(commands).sort(), ["Effect 3", "Effect 4", "across machines"])
    const beside: Record<string, Array<string>> = { "across machines": commands["Effect 3"]! }
    for (const [command, words] of Object.entries(commands)) {
      const all = [...words.slice(1), ...(beside[command] ?? []).slice(1)]
      const ours = all.filter((word) => word.startsWith("@mcp-worker/")).map((word) => word.split("/")[1]!)
      const ranges = new Map(all.filter((word) => !word.startsWith("@mcp-worker/")).map(Packed.splitSpec))
      for (const name of ours) {
        const { dependencies = {}, peerDependencies = {}, peerDependenciesMeta = {} } = manifests[name]
        for (const dependency of Object.keys(dependencies)) assert.include(ours, dependency.split("/")[1], command)
        for (const [peer, range] of Object.entries(peerDependencies)) {
          if (peerDependenciesMeta[peer]?.optional === true) continue
          assert.strictEqual(ranges.get(peer), range, `${command}: ${peer} as @mcp-worker/${name} names it`)
        }
      }
    }
    // The optional peers SqliteStorage names when they are missing: package.json's ranges, and in the README.
    for (const spec of Object.values(SqliteStorage.optionalPeers)) {
      const [peer, range] = Packed.splitSpec(spec)
      assert.strictEqual(manifests.cluster.peerDependencies[peer], range)
      assert.isTrue(manifests.cluster.peerDependenciesMeta[peer].optional)
      assert.include(Packed.readmeCommandsBlock(), spec)
    }
  })

  it.live(
    "Effect 3: the README's program runs from a read-only install",
    () => runProgram(effect3Project, "Effect 3", process.execPath),
    minutes(2)
  )

  it.live(
    "no Effect, with the Effect 3 command: the README's program runs from a read-only install",
    () => runProgram(effect3Project, "no Effect", process.execPath),
    minutes(2)
  )

  it.live(
    "Effect 4, on a Node its engines allow: the README's program runs from a read-only install",
    () => runProgram(effect4Project, "Effect 4", effect4NodePath),
    minutes(2)
  )

  it.live(
    "cluster, with its SQLite peers: the README's program runs from a read-only install",
    () => runProgram(clusterProject, "cluster", process.execPath),
    minutes(2)
  )

  it.live(
    "C98: every face: the README's first programs type-check --strict without @types/node",
    () =>
      Effect.all(
        [
          typecheck(effect3Project, ["Effect 3", "no Effect"]),
          typecheck(effect4Project, ["Effect 4"]),
          typecheck(clusterProject, ["cluster"])
        ],
        { concurrency: 2 }
      ),
    minutes(3)
  )

  // The Effect 3 program as the README writes it: `npx -y` fetches server-everything from the registry into an empty
  // npm cache, which takes far longer than a warm start, within the program's own budget. The server's environment
  // keeps HOME (C18) and npm's cache is under it: a new HOME is a cold cache for npx.
  it.scopedLive(
    "Effect 3, on a cold npm cache: the README's program fetches its server with npx and prints its result",
    () =>
      Effect.gen(function* () {
        const home = yield* Packed.temporaryDirectory("mcp-worker-home-")
        Fs.writeFileSync(Path.join(effect3Project, "cold.mjs"), Packed.readmePrograms()["Effect 3"]!)
        const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
        const { stderr, stdout } = yield* Packed.run(process.execPath, ["cold.mjs"], {
          cwd: effect3Project,
          env: { ...env, HOME: home, XDG_CACHE_HOME: Path.join(effect3Project, "cache") },
          timeoutMs: minutes(2)
        })
        assert.deepStrictEqual(printed(stdout), ["Echo: hello", ""], stderr)
        assert.isNotEmpty(Fs.readdirSync(Path.join(home, ".npm/_npx")), "npx fetched the server into the empty cache")
        assert.deepStrictEqual(Packed.processesUnder(home), [])
      }),
    minutes(3)
  )

  it.live(
    "C68: SqliteStorage without its optional peers fails saying what to install",
    () =>
      Effect.gen(function* () {
        yield* install(effect3Project, "across machines", process.execPath)
        const missing = Object.values(SqliteStorage.optionalPeers).find(
          (spec) => !Fs.existsSync(Path.join(effect3Project, "node_modules", Packed.splitSpec(spec)[0]))
        )
        assert.isDefined(missing, "npm installed no optional peer of SqliteStorage")
        Fs.writeFileSync(
          Path.join(effect3Project, "sqlite.mjs"),
          [
            'import * as SqliteStorage from "@mcp-worker/cluster/SqliteStorage"',
            'import { Effect, Layer } from "effect"',
            'const layer = SqliteStorage.layer({ filename: "cluster.db" })',
            "const error = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(layer))))",
            "console.log(`${error._tag}: ${error.message}`)"
          ].join("\n")
        )
        const { stdout } = yield* Packed.run(process.execPath, ["sqlite.mjs"], {
          cwd: effect3Project,
          timeoutMs: minutes(1)
        })
        assert.strictEqual(
          stdout,
          `SqlError: SqliteStorage needs ${missing}, an optional peer of @mcp-worker/cluster that is not installed: ` +
            `npm install ${missing}\n`
        )
      }),
    minutes(4)
  )
  it.live("every fragment of the README compiles --strict inside the program its marker names", () =>
    Effect.gen(function* () {
      const fragments = Packed.readmeBlocks().filter((block) => block.check?._tag === "fragment")
      assert.isAbove(fragments.length, 10)
      yield* compileBlocks(
        effect3Project,
        fragments.map((block) => ({ ...block, code: Packed.fragmentProgram(block) }))
      )
    })
  )

  // Last: a section's install lines are run in the face's project, which the tests above have used as installed.
  it.live(
    "every typecheck block of the README compiles --strict in a project with its section's install lines",
    () =>
      Effect.gen(function* () {
        const projects: Record<Face, { project: string; node: string }> = {
          "Effect 3": { project: effect3Project, node: process.execPath },
          "Effect 4": { project: effect4Project, node: effect4NodePath },
          cluster: { project: clusterProject, node: process.execPath }
        }
        const groups = blockGroups().sort((a, b) => a.lines.length - b.lines.length)
        assert.isAbove(groups.length, 1)
        yield* Effect.forEach(
          (["Effect 3", "Effect 4", "cluster"] as const).map((face) => groups.filter((group) => group.face === face)),
          (ofFace) =>
            Effect.forEach(ofFace, (group) =>
              Effect.gen(function* () {
                const { node, project } = projects[group.face]
                for (const words of group.lines) yield* installWords(project, words, node)
                yield* compileBlocks(project, group.blocks)
              })
            ),
          { concurrency: 2, discard: true }
        )
      }),
    minutes(4)
  )
})
