// The contract's contents and clause index are generated from its headings (scripts/contractIndex.mjs): the committed
// block is what the generator writes, it lists every section and every clause in number order, and a clause added
// anywhere makes the check fail until the block is rewritten, with no edit of the generator.
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
// @ts-expect-error plain ESM script without types
import { begin, contractPath, end, headingsOf } from "../../scripts/contractIndex.mjs"

const script = Path.join(Path.dirname(contractPath), "..", "scripts", "contractIndex.mjs")
const run = (...args: ReadonlyArray<string>) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8" })

interface Clause {
  readonly name: string
  readonly anchor: string
}

const blockOf = (text: string) => text.slice(text.indexOf(begin), text.indexOf(end))
const indexedClauses = (text: string) => [...blockOf(text).matchAll(/^\| \[(C\d+[a-z]?)\]\(#(c\d+[a-z]?)\)/gm)]

describe("docs/contract.md index", () => {
  it("is what the generator writes (node scripts/contractIndex.mjs --check)", () => {
    const result = run("--check")
    assert.strictEqual(result.status, 0, result.stderr)
  })

  it("lists every ## section and every clause once, in number order, each linking its anchor", () => {
    const text = Fs.readFileSync(contractPath, "utf8")
    const headings = text.split("\n").filter((line) => line.startsWith("## "))
    const block = blockOf(text)
    for (const heading of headings) assert.include(block, `[${heading.slice(3)}](#`, heading)
    const clauses: ReadonlyArray<Clause> = headingsOf(text).clauses
    const listed = indexedClauses(text)
    assert.sameMembers(
      listed.map((m) => m[1]),
      clauses.map((c) => c.name)
    )
    for (const m of listed) assert.include(text, `<a id="${m[2]}"></a>`, m[1])
    const numbers = listed.map((m) => Number(m[1].slice(1).replace(/[a-z]$/, "")))
    assert.deepStrictEqual(
      numbers,
      [...numbers].sort((a, b) => a - b)
    )
  })

  it("a clause added out of order makes the check fail until the index is rewritten", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "contract-index-"))
    try {
      const file = Path.join(dir, "contract.md")
      const text = Fs.readFileSync(contractPath, "utf8")
      const lifecycle = text.indexOf("\n## Lifecycle\n") + "\n## Lifecycle\n".length
      const added = `\n<a id="c999"></a>\n\n### C999 — a clause written first\n\n**Rule.** Text.\n`
      Fs.writeFileSync(file, text.slice(0, lifecycle) + added + text.slice(lifecycle))
      const stale = run("--check", file)
      assert.strictEqual(stale.status, 1)
      assert.include(stale.stderr, "stale")
      assert.strictEqual(run(file).status, 0)
      assert.strictEqual(run("--check", file).status, 0)
      const listed = indexedClauses(Fs.readFileSync(file, "utf8")).map((m) => m[1])
      assert.strictEqual(listed.at(-1), "C999")
      assert.strictEqual(listed.length, headingsOf(text).clauses.length + 1)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a clause heading without its anchor is refused, naming the clause", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "contract-index-"))
    try {
      const file = Path.join(dir, "contract.md")
      const text = Fs.readFileSync(contractPath, "utf8").replace('<a id="c8"></a>', "")
      Fs.writeFileSync(file, text)
      const result = run("--check", file)
      assert.notStrictEqual(result.status, 0)
      assert.include(result.stderr, 'C8 lacks <a id="c8"></a>')
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
