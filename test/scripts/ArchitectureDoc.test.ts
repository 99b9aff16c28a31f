// docs/architecture.md names every source file: its "Source files, by room" section lists each `.ts` file under
// packages/*/src once, as `<package>/<path under src>`, and every `.ts` file the doc names anywhere (prose, code
// spans, diagrams) exists: in this repository, or in the Effect packages' sources it cites as models.
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.join(import.meta.dirname, "..", "..")
const doc = Fs.readFileSync(Path.join(root, "docs", "architecture.md"), "utf8")
const packages = Fs.readdirSync(Path.join(root, "packages")).filter((name) =>
  Fs.existsSync(Path.join(root, "packages", name, "src"))
)

const skipped = new Set(["node_modules", "dist", ".tsbuild", ".docgen", ".git", ".runtimes"])
const walk = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    skipped.has(entry.name)
      ? []
      : entry.isDirectory()
        ? walk(Path.join(dir, entry.name))
        : [Path.relative(root, Path.join(dir, entry.name)).split(Path.sep).join("/")]
  )

/** Every source file as the doc names it: `node/internal/host/open.ts` for packages/node/src/internal/host/open.ts. */
const sources = packages
  .flatMap((name) =>
    walk(Path.join(root, "packages", name, "src"))
      .filter((file) => file.endsWith(".ts"))
      .map((file) => `${name}/${file.slice(`packages/${name}/src/`.length)}`)
  )
  .sort()

const section = doc.slice(doc.indexOf("\n## Source files, by room\n"))
const listed = [...section.matchAll(/^- `([^`]+\.ts)` — \S/gm)].map((m) => m[1])

const effectSources = Fs.readdirSync(Path.join(root, "node_modules", "@effect")).map((name) =>
  Path.join(root, "node_modules", "@effect", name, "src")
)

describe("docs/architecture.md", () => {
  it("lists every source file once, with its role", () => {
    assert.isAbove(sources.length, 0)
    assert.strictEqual(new Set(listed).size, listed.length, "a file listed twice")
    assert.deepStrictEqual(
      sources.filter((file) => !listed.includes(file)),
      [],
      "source files the doc does not list"
    )
    assert.deepStrictEqual(
      listed.filter((file) => !sources.includes(file)),
      [],
      "listed files that are not source files"
    )
  })

  it("every file it names exists", () => {
    const files = walk(root)
    // Any name ending in `.ts`, in prose, code spans and diagrams alike.
    const named = [...new Set([...doc.matchAll(/(?<![\w./@-])(\w[\w./-]*\.ts)(?!\w)/g)].map((m) => m[1]))]
    assert.isAbove(named.length, 0)
    const resolves = (name: string) => {
      const [first, ...rest] = name.split("/")
      if (packages.includes(first) && rest.length > 0) {
        return files.includes(`packages/${first}/src/${rest.join("/")}`) || files.includes(`packages/${name}`)
      }
      return (
        files.some((file) => file === name || file.endsWith(`/${name}`)) ||
        effectSources.some((dir) => Fs.existsSync(Path.join(dir, name)))
      )
    }
    assert.deepStrictEqual(
      named.filter((name) => !resolves(name)),
      []
    )
  })
})
