// The contract's contents and its clause index, generated from its headings so that neither is a second record: every
// `## ` section, then every clause (`### C12 — title`, under its `<a id="c12"></a>`) in number order with its section.
// `node scripts/contractIndex.mjs [file]` rewrites the block between the markers; `--check` exits 1 when it is stale.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const begin = "<!-- contract-index: generated from the headings by scripts/contractIndex.mjs; do not edit -->"
export const end = "<!-- /contract-index -->"

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
export const contractPath = path.join(root, "docs", "contract.md")

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export const slugOf = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

const clauseHeading = /^### (C(\d+)([a-z]?)) — (.+)$/

/** The sections and clauses of `text`; a clause whose anchor is missing or differs, or a number used twice, throws. */
export const headingsOf = (text) => {
  const lines = text.split("\n")
  const sections = []
  const clauses = []
  let section
  let fenced = false
  lines.forEach((line, i) => {
    if (line.startsWith("```")) fenced = !fenced
    if (fenced) return
    if (line.startsWith("## ")) {
      section = { title: line.slice(3).trim(), anchor: slugOf(line.slice(3)) }
      sections.push(section)
      return
    }
    if (!line.startsWith("### ")) return
    const match = clauseHeading.exec(line)
    if (match === null) throw new Error(`line ${i + 1}: a ### heading is a clause, "### C<n> — title": ${line}`)
    const [, name, number, letter, title] = match
    const anchor = name.toLowerCase()
    const above = lines.slice(Math.max(0, i - 2), i).join("\n")
    if (!above.includes(`<a id="${anchor}"></a>`))
      throw new Error(`line ${i + 1}: ${name} lacks <a id="${anchor}"></a>`)
    if (section === undefined) throw new Error(`line ${i + 1}: ${name} is under no ## section`)
    clauses.push({ name, number: Number(number), letter, title, anchor, section })
  })
  const seen = new Set()
  for (const { name } of clauses) {
    if (seen.has(name)) throw new Error(`${name} heads two clauses`)
    seen.add(name)
  }
  return { sections, clauses }
}

const cell = (text) => text.replace(/\|/g, "\\|")

// `first` then the items joined by " · ", broken into lines of at most `width` characters.
const wrap = (first, items, width) => {
  const lines = [first]
  for (const item of items) {
    const last = lines[lines.length - 1]
    if (last === first || last.length + item.length + 3 <= width)
      lines[lines.length - 1] = `${last}${last === first ? " " : " · "}${item}`
    else {
      lines[lines.length - 1] = `${last} ·`
      lines.push(item)
    }
  }
  return lines.join("\n")
}

/** The generated block, markers included, for the headings of `text` (the block itself holds no heading). */
export const indexOf = (text) => {
  const { sections, clauses } = headingsOf(text)
  const ordered = [...clauses].sort((a, b) => a.number - b.number || a.letter.localeCompare(b.letter))
  return [
    begin,
    "",
    wrap(
      "Contents:",
      sections.map(({ title, anchor }) => `[${title}](#${anchor})`),
      120
    ),
    "",
    `The ${ordered.length} clauses in number order:`,
    "",
    "| clause | promise | section |",
    "|---|---|---|",
    ...ordered.map(
      ({ name, anchor, title, section }) =>
        `| [${name}](#${anchor}) | ${cell(title)} | [${section.title}](#${section.anchor}) |`
    ),
    "",
    end
  ].join("\n")
}

/** `text` with its block regenerated; the markers must each appear once, begin before end. */
export const rewrite = (text) => {
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  if (from === -1 || to < from || text.indexOf(begin, from + 1) !== -1 || text.indexOf(end, to + 1) !== -1) {
    throw new Error(`the contract needs one "${begin}" line followed by one "${end}" line`)
  }
  return text.slice(0, from) + indexOf(text) + text.slice(to + end.length)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const check = args.includes("--check")
  const file = args.find((arg) => arg !== "--check") ?? contractPath
  const text = fs.readFileSync(file, "utf8")
  const next = rewrite(text)
  if (check) {
    if (next !== text) {
      console.error(
        `${path.relative(process.cwd(), file)}: the contents or clause index is stale; run node scripts/contractIndex.mjs`
      )
      process.exit(1)
    }
  } else if (next !== text) {
    fs.writeFileSync(file, next)
    console.log(`${path.relative(process.cwd(), file)}: contents and clause index rewritten`)
  }
}
