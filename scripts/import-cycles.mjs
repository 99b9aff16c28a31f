// Fails when the value imports among the files of packages/*/src form a circle, or an internal module imports a
// public face as a value. An `import type` (or an import
// whose every name is `type`) does not count, as in Effect's own internal modules: it is erased at compile time.
// The graph is read with the TypeScript compiler's own parser, and its circles found as strongly connected
// components (Tarjan).
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { files, packagesDir, root } from "./sourceFiles.mjs"

const known = new Set(files)

// `@mcp-worker/<pkg>` and `@mcp-worker/<pkg>/<Module>` name another package's sources.
const resolve = (from, specifier) => {
  const workspace = /^@mcp-worker\/([^/]+)(?:\/(.+))?$/.exec(specifier)
  const base = workspace
    ? path.join(packagesDir, workspace[1], "src", workspace[2] ?? "index")
    : specifier.startsWith(".")
      ? path.resolve(path.dirname(from), specifier)
      : undefined
  if (base === undefined) return undefined
  const stem = base.replace(/\.(js|ts|mjs|cjs)$/, "")
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, path.join(stem, "index.ts")]) {
    if (known.has(candidate)) return candidate
  }
  return undefined
}

const isTypeOnly = (node) => {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause
    if (clause === undefined) return false // a side-effect import runs the module
    if (clause.isTypeOnly) return true
    if (clause.name !== undefined) return false
    const bindings = clause.namedBindings
    return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0
      ? bindings.elements.every((element) => element.isTypeOnly)
      : false
  }
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true
    const clause = node.exportClause
    return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0
      ? clause.elements.every((element) => element.isTypeOnly)
      : false
  }
  return false
}

const edges = new Map()
for (const file of files) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false)
  const targets = new Set()
  for (const statement of source.statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue
    if (statement.moduleSpecifier === undefined || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    if (isTypeOnly(statement)) continue
    const target = resolve(file, statement.moduleSpecifier.text)
    if (target !== undefined && target !== file) targets.add(target)
  }
  edges.set(file, targets)
}

// Tarjan's strongly connected components: every component of more than one file is a circle.
let index = 0
const indices = new Map()
const lowlinks = new Map()
const stack = []
const onStack = new Set()
const circles = []
const connect = (node) => {
  indices.set(node, index)
  lowlinks.set(node, index)
  index++
  stack.push(node)
  onStack.add(node)
  for (const next of edges.get(node)) {
    if (!indices.has(next)) {
      connect(next)
      lowlinks.set(node, Math.min(lowlinks.get(node), lowlinks.get(next)))
    } else if (onStack.has(next)) {
      lowlinks.set(node, Math.min(lowlinks.get(node), indices.get(next)))
    }
  }
  if (lowlinks.get(node) === indices.get(node)) {
    const component = []
    let member
    do {
      member = stack.pop()
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1) circles.push(component)
  }
}
for (const file of files) if (!indices.has(file)) connect(file)

// The second rule of the rooms: a public module that stands on internal modules of its package is a face, and no
// internal module of that package imports it as a value; another package's public modules are its API (types may flow down, as in Effect's own internal modules).
const isInternal = (file) => file.includes(`${path.sep}internal${path.sep}`)
const packageOf = (file) => path.relative(packagesDir, file).split(path.sep)[0]
const faces = new Set(
  files.filter(
    (file) =>
      !isInternal(file) &&
      [...edges.get(file)].some((target) => isInternal(target) && packageOf(target) === packageOf(file))
  )
)
const upward = []
for (const [file, targets] of edges) {
  if (!isInternal(file)) continue
  for (const target of targets)
    if (faces.has(target) && packageOf(target) === packageOf(file)) upward.push([file, target])
}

const rel = (file) => path.relative(root, file)
if (process.argv.includes("--list")) {
  for (const [file, targets] of edges) console.log(rel(file), "->", [...targets].map(rel).join(", "))
}
for (const circle of circles) console.error(`import circle: ${circle.map(rel).join(" → ")}`)
for (const [file, target] of upward) {
  console.error(`internal module imports a public face as a value: ${rel(file)} → ${rel(target)}`)
}
if (circles.length > 0 || upward.length > 0) process.exit(1)
console.log(`no import circles among ${files.length} files of packages/*/src, and no internal module imports a face`)
