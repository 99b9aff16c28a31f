// The README's blocks without installing anything: each says how it is checked, its install lines name the versions
// this repository pins, its commands name scripts that exist, its code parses and imports only public modules, and
// the "which package" table is the packages' exports. Running and type-checking is test/install/Install.test.ts's.
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"
// @ts-expect-error plain ESM build script without types
import { importTable, publicModules } from "../../scripts/publicApi.mjs"
// @ts-expect-error plain ESM script without types
import { packages as publishedPackages } from "../../scripts/whichPackage.mjs"
import * as Packed from "../install/packed.js"

const packages: ReadonlyArray<string> = publishedPackages

const manifestOf = (name: string) => Packed.readJson(Path.join(Packed.root, "packages", name, "package.json"))
const root = Packed.readJson(Path.join(Packed.root, "package.json"))
const blocks = Packed.readmeBlocks()

// The range a README install line must give a package: the one a package of ours names as a peer, else the version
// this repository is tested with as a caret range. OpenTelemetry's SDK packages pin each other exactly (the
// Prometheus exporter 0.223.0 depends on sdk-metrics 2.12.0, not ^2.12.0): a caret would install a second copy, whose
// types do not match, so those are named exactly.
const rangeOf = (name: string): string | undefined => {
  const peers = packages.map((p) => manifestOf(p).peerDependencies?.[name]).filter((r) => r !== undefined)
  if (name === "effect") return undefined // two faces, two majors: checked per command in the install test
  if (peers.length > 0) return peers[0]
  const tested = root.devDependencies[name]
  if (tested === undefined) return undefined
  return name.startsWith("@opentelemetry/") && name !== "@opentelemetry/api" ? tested : `^${tested}`
}

const publicPaths = new Set(
  packages.flatMap((name) =>
    publicModules(Path.join(Packed.root, "packages", name)).public.map((module: string) => {
      const stem = module.replace(/\.ts$/, "")
      return stem === "index" ? `@mcp-worker/${name}` : `@mcp-worker/${name}/${stem}`
    })
  )
)

describe("README.md", () => {
  it("every code block says how it is checked", () => {
    const unchecked = blocks.filter((block) => block.check === undefined)
    assert.deepStrictEqual(
      unchecked.map(
        (block) => `line ${block.line} (${block.section}): ${block.marker ?? "no <!-- readme: … --> marker"}`
      ),
      []
    )
    const faces = blocks.flatMap((block) => (block.check?._tag === "run" ? [block.check.face] : []))
    assert.deepStrictEqual(faces, ["Effect 3", "no Effect", "Effect 4", "cluster"])
  })

  it("install lines name each package with the range this repository pins", () => {
    const installs = blocks.filter((block) => block.check?._tag === "install")
    assert.isAbove(installs.length, 0)
    for (const block of installs) {
      for (const words of Packed.installLines(block.code)) {
        for (const spec of words.slice(1).filter((word) => !word.startsWith("@mcp-worker/"))) {
          const [name, range] = Packed.splitSpec(spec)
          assert.isDefined(range, `line ${block.line}: ${name} has a version`)
          const pinned = rangeOf(name)
          if (pinned !== undefined) assert.strictEqual(range, pinned, `line ${block.line}: ${name}`)
          else assert.strictEqual(name, "effect", `line ${block.line}: ${name} is a dependency of this repository`)
        }
      }
    }
  })

  it("shell blocks run scripts this repository has", () => {
    for (const block of blocks.filter((b) => b.check?._tag === "shell")) {
      for (const [, script] of block.code.matchAll(/npm run ([\w:-]+)/g)) {
        assert.property(root.scripts, script!, `line ${block.line}: npm run ${script}`)
      }
      for (const [, file] of block.code.matchAll(/(scripts\/[\w.-]+)/g)) {
        assert.isTrue(Fs.existsSync(Path.join(Packed.root, file!)), `line ${block.line}: ${file}`)
      }
    }
  })

  it("code parses, and imports only modules the packages' exports open", () => {
    for (const block of blocks.filter((b) => ["run", "typecheck", "fragment"].includes(b.check?._tag ?? ""))) {
      const kind = block.language === "js" ? ts.ScriptKind.JS : ts.ScriptKind.TS
      // A fragment may use `yield*` and `await` at its top, as the body of the program it is part of.
      const code = block.check?._tag === "fragment" ? `async function* body() {\n${block.code}\n}` : block.code
      const source = ts.createSourceFile(`block.${block.language}`, code, ts.ScriptTarget.Latest, true, kind)
      const diagnostics = (source as unknown as { parseDiagnostics: ReadonlyArray<ts.Diagnostic> }).parseDiagnostics
      assert.deepStrictEqual(
        diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
        [],
        `line ${block.line} parses`
      )
      for (const [, from] of block.code.matchAll(/from "(@mcp-worker\/[^"]+)"/g)) {
        assert.isTrue(publicPaths.has(from!), `line ${block.line}: ${from} is a public module`)
      }
    }
  })

  it("the which-package table is the packages' exports maps and modules", () => {
    const text = Fs.readFileSync(Path.join(Packed.root, "README.md"), "utf8")
    const table = /<!-- which-package:start -->\n([\s\S]*?)\n<!-- which-package:end -->/.exec(text)?.[1]
    assert.strictEqual(table, importTable(Packed.root, packages))
  })
})
