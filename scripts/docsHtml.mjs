// The API reference as static HTML, from the markdown @effect/docgen writes (docs/modules/<Module>.ts.md): a renderer
// of the part of markdown docgen uses (front matter, headings, lists, fenced code, paragraphs, code spans, links,
// bold), one page per module, a page per package and an index linking every package and module. No dependency.
import * as fs from "node:fs"
import * as path from "node:path"

const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

// GitHub's heading ids, which docgen's tables of contents link to: lower case, punctuation dropped, spaces to "-",
// a repeated heading numbered.
const slugger = () => {
  const seen = new Map()
  return (text) => {
    const base = text
      .toLowerCase()
      .replace(/<[^>]*>/g, "")
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    return count === 0 ? base : `${base}-${count}`
  }
}

const inline = (text) =>
  text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith("`") && part.endsWith("`") && part.length > 1
        ? `<code>${escape(part.slice(1, -1))}</code>`
        : escape(part)
            .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, href) => `<a href="${href}">${label}</a>`)
            .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    )
    .join("")

// Nested lists from "- " items indented by two spaces a level.
const list = (items) => {
  let html = ""
  let depth = -1
  for (const { level, text } of items) {
    if (level > depth) html += "<ul><li>".repeat(level - depth)
    else html += "</li></ul>".repeat(depth - level) + "</li><li>"
    html += inline(text)
    depth = level
  }
  return html + "</li></ul>".repeat(depth + 1)
}

const withoutFrontMatter = (lines) => {
  if (!/^(---|\*\*\*)$/.test(lines[0] ?? "")) return lines
  const end = lines.indexOf("---", 1)
  return end === -1 ? lines : lines.slice(end + 1)
}

/** The HTML of docgen's markdown `text` (the body of a page). */
export const renderMarkdown = (text) => {
  const lines = withoutFrontMatter(text.split("\n"))
  const slug = slugger()
  const out = []
  let paragraph = []
  let items = []
  const flush = () => {
    if (paragraph.length > 0) out.push(`<p>${inline(paragraph.join("\n"))}</p>`)
    if (items.length > 0) out.push(list(items))
    paragraph = []
    items = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const heading = /^(#{1,6}) (.*)$/.exec(line)
    const item = /^( *)- (.*)$/.exec(line)
    if (line.startsWith("```")) {
      flush()
      const end = lines.indexOf("```", i + 1)
      const last = end === -1 ? lines.length : end
      out.push(`<pre><code>${escape(lines.slice(i + 1, last).join("\n"))}</code></pre>`)
      i = last
    } else if (heading !== null) {
      flush()
      const level = heading[1].length
      out.push(`<h${level} id="${slug(heading[2])}">${inline(heading[2])}</h${level}>`)
    } else if (item !== null) {
      if (paragraph.length > 0) flush()
      items.push({ level: Math.floor(item[1].length / 2), text: item[2] })
    } else if (line.trim() === "") flush()
    else if (/^---+$/.test(line)) {
      flush()
      out.push("<hr>")
    } else if (/^<h\d[^>]*>.*<\/h\d>$/.test(line)) {
      flush()
      out.push(line)
    } else paragraph.push(line)
  }
  flush()
  return out.join("\n")
}

const style = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f5f5f5;padding:.75rem;overflow-x:auto}code{font:13px ui-monospace,monospace}
nav{margin-bottom:1.5rem}a{color:#0b57d0}h1,h2,h3{line-height:1.2}`

const page = (title, nav, body) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>` +
  `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${style}</style></head>\n` +
  `<body><nav>${nav}</nav>\n${body}\n</body></html>\n`

/** The page of module `file` (`Foo.ts.md`): `Foo.ts.html`. */
export const pageOf = (file) => file.replace(/\.md$/, ".html")

/**
 * Writes the reference of `packages` (`{ name, description, modules }`, `modules` the directory of docgen's
 * `<Module>.ts.md`) into `outDir`: index.html, and per package `<short name>/index.html` and a page per module.
 */
export const writeReference = (packages, outDir) => {
  fs.rmSync(outDir, { recursive: true, force: true })
  const sections = []
  for (const { name, description, modules } of packages) {
    const short = name.split("/").pop()
    const dir = path.join(outDir, short)
    fs.mkdirSync(dir, { recursive: true })
    const files = fs
      .readdirSync(modules, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts.md"))
      .sort()
    const links = (prefix) =>
      `<ul>${files.map((file) => `<li><a href="${prefix}${pageOf(file)}">${escape(file.replace(/\.ts\.md$/, ""))}</a></li>`).join("")}</ul>`
    for (const file of files) {
      // A module in a folder of `src` (`protocol/Owner.ts.md`) has its page in the same folder.
      const up = "../".repeat(file.split(path.sep).length - 1)
      const nav = `<a href="${up}../index.html">mcp-worker</a> / <a href="${up}index.html">${escape(name)}</a>`
      const body = renderMarkdown(fs.readFileSync(path.join(modules, file), "utf8"))
      fs.mkdirSync(path.dirname(path.join(dir, pageOf(file))), { recursive: true })
      fs.writeFileSync(path.join(dir, pageOf(file)), page(`${name}: ${file.replace(/\.ts\.md$/, "")}`, nav, body))
    }
    const intro = `<h1>${escape(name)}</h1><p>${escape(description ?? "")}</p>`
    fs.writeFileSync(
      path.join(dir, "index.html"),
      page(name, '<a href="../index.html">mcp-worker</a>', intro + links(""))
    )
    sections.push(`<h2><a href="${short}/index.html">${escape(name)}</a></h2>${links(`${short}/`)}`)
  }
  fs.writeFileSync(
    path.join(outDir, "index.html"),
    page("mcp-worker API", "", `<h1>mcp-worker API</h1>${sections.join("\n")}`)
  )
}

/**
 * What is wrong with the reference in `outDir`: a module of `expected` (`{ short, modules: ["Foo.ts", …] }`) without
 * a page, and every link to a page or an id that is not there. Empty when it is whole.
 */
export const problemsOf = (outDir, expected) => {
  const problems = []
  for (const { short, modules } of expected) {
    for (const module of modules) {
      if (!fs.existsSync(path.join(outDir, short, `${module}.html`))) problems.push(`${short}/${module}: no page`)
    }
  }
  const pages = fs
    .readdirSync(outDir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".html"))
    .sort()
  const ids = new Map(
    pages.map((file) => [
      path.join(outDir, file),
      new Set([...fs.readFileSync(path.join(outDir, file), "utf8").matchAll(/ id="([^"]*)"/g)].map((m) => m[1]))
    ])
  )
  for (const file of pages) {
    const from = path.join(outDir, file)
    for (const [, href] of fs.readFileSync(from, "utf8").matchAll(/ href="([^"]*)"/g)) {
      if (/^[a-z]+:/.test(href)) continue
      const [target, id] = href.split("#")
      const to = target === "" ? from : path.resolve(path.dirname(from), target)
      if (!ids.has(to)) problems.push(`${file}: ${href}: no such page`)
      else if (id !== undefined && !ids.get(to).has(id)) problems.push(`${file}: ${href}: no such id`)
    }
  }
  return problems
}
