// docs/benchmarks.md against what it points at: every link into it or its history resolves (anchors included), every
// bench script of package.json is in its "How to run", and a target that links to the contract states the contract's
// numbers, so the two cannot drift apart.
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
// @ts-expect-error plain ESM script without types
import { slugOf } from "../../scripts/contractIndex.mjs"

const root = Path.join(import.meta.dirname, "..", "..")
const read = (file: string) => Fs.readFileSync(Path.join(root, file), "utf8")
const markdown = ["README.md", ...Fs.readdirSync(Path.join(root, "docs")).map((name) => `docs/${name}`)].filter(
  (file) => file.endsWith(".md")
)

/** The anchors of a document: its headings' GitHub slugs and its `<a id>`s. */
const anchorsOf = (file: string): Set<string> => {
  const text = read(file)
  const anchors = new Set([...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]))
  let fenced = false
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    if (!fenced && /^#{1,6} /.test(line)) anchors.add(slugOf(line.replace(/^#+ /, "")))
  }
  return anchors
}

/** The text an anchor of the contract opens: a clause up to the next clause, a section up to the next section. */
const contractSection = (anchor: string): string => {
  const text = read("docs/contract.md")
  const clause = text.indexOf(`<a id="${anchor}"></a>`)
  if (clause !== -1) {
    const next = text.indexOf('<a id="c', clause + 1)
    return text.slice(clause, next === -1 ? undefined : next)
  }
  const lines = text.split("\n")
  const start = lines.findIndex((line) => line.startsWith("## ") && slugOf(line.slice(3)) === anchor)
  assert.notStrictEqual(start, -1, `contract.md#${anchor}`)
  const end = lines.findIndex((line, i) => i > start && line.startsWith("## "))
  return lines.slice(start, end === -1 ? undefined : end).join("\n")
}

const numbersOf = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]))

describe("docs/benchmarks.md", () => {
  it("every link into it or its history resolves", () => {
    const links = markdown.flatMap((file) =>
      [...read(file).matchAll(/\]\(([^)#\s]*benchmarks(?:-history)?\.md)(#[^)\s]+)?\)/g)].map((m) => ({
        file,
        target: Path.join(Path.dirname(file), m[1]),
        anchor: m[2]
      }))
    )
    assert.isAbove(links.length, 0)
    const broken = links.filter(
      ({ anchor, target }) =>
        !Fs.existsSync(Path.join(root, target)) || (anchor !== undefined && !anchorsOf(target).has(anchor.slice(1)))
    )
    assert.deepStrictEqual(
      broken.map(({ anchor, file, target }) => `${file} → ${target}${anchor ?? ""}`),
      []
    )
  })

  it("says how to run every bench script", () => {
    const scripts = Object.keys(JSON.parse(read("package.json")).scripts).filter((name) => /^bench(:|$)/.test(name))
    const doc = read("docs/benchmarks.md")
    const howTo = doc.slice(doc.indexOf("## How to run"), doc.indexOf("## Current results"))
    assert.deepStrictEqual(
      scripts.filter((name) => !howTo.includes(`npm run ${name}\``)),
      []
    )
  })

  it("a target that links to the contract states the contract's numbers", () => {
    const targets = [...read("docs/benchmarks.md").matchAll(/\[([^\]]+)\]\(contract\.md#([\w-]+)\)/g)].filter((m) =>
      /^(≤|<|linear)/.test(m[1])
    )
    assert.isAbove(targets.length, 10)
    for (const [, target, anchor] of targets) {
      const section = contractSection(anchor)
      const stated = new Set(numbersOf(section))
      for (const n of numbersOf(target)) assert.isTrue(stated.has(n), `${target}: ${n} is not in contract.md#${anchor}`)
      if (target === "linear") assert.include(section, "linear")
    }
  })
})
