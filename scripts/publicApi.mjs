// The public modules of a package, as its exports map says, and the exports among them that lack a `@since` or a
// `@category`. @effect/docgen requires `@since` but files an export without `@category` under "utils" without a
// word, so the reference would lose its grouping silently; this check names each one. Read with the TypeScript
// compiler's own parser, as docgen reads them.
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

// Node's own order for pattern keys: the longest prefix before `*` wins.
const targetOf = (exportsMap, subpath) => {
  if (Object.hasOwn(exportsMap, subpath)) return exportsMap[subpath]
  const patterns = Object.keys(exportsMap)
    .filter((key) => {
      const star = key.indexOf("*")
      if (star === -1) return false
      const prefix = key.slice(0, star)
      const suffix = key.slice(star + 1)
      return subpath.startsWith(prefix) && subpath.endsWith(suffix) && subpath.length >= key.length - 1
    })
    .sort((a, b) => b.indexOf("*") - a.indexOf("*"))
  return patterns.length === 0 ? null : exportsMap[patterns[0]]
}

const sourceFiles = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

/**
 * Every `src` module of the package at `packageDir`, split into the public ones (paths relative to `src`) and the
 * rest. A module is public when the exports map resolves its subpath (`./McpWorkers` for `src/McpWorkers.ts`, `.`
 * for `src/index.ts`) to a target. A subpath under `./internal/` is the packages' wiring among themselves even when
 * the map opens one for a sibling package, never API.
 */
export const publicModules = (packageDir) => {
  const { exports: exportsMap } = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"))
  const srcDir = path.join(packageDir, "src")
  const modules = sourceFiles(srcDir).map((file) => path.relative(srcDir, file).split(path.sep).join("/"))
  const isPublic = (module) => {
    const stem = module.replace(/\.ts$/, "")
    const subpath = stem === "index" ? "." : `./${stem}`
    return !subpath.startsWith("./internal/") && targetOf(exportsMap, subpath) !== null
  }
  return {
    public: modules.filter(isPublic).sort(),
    private: modules.filter((module) => !isPublic(module)).sort()
  }
}

const lastDoc = (text, position) => {
  const ranges = ts.getLeadingCommentRanges(text, position) ?? []
  return ranges
    .map((range) => text.slice(range.pos, range.end))
    .filter((comment) => comment.startsWith("/**"))
    .at(-1)
}

const hasTag = (doc, tag) => new RegExp(`@${tag}[ \\t]+\\S`).test(doc)

const isExported = (statement) =>
  ts.canHaveModifiers(statement) &&
  (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)

// Each exported name of a statement with the doc comment docgen reads for it: a re-export's names carry their own
// comments inside the braces (`export { /** … */ Name } from`), everything else the statement's. docgen files a
// `export * as Name` under "exports" by itself, so only its `@since` is asked for.
const exportsOf = (statement, text) => {
  const doc = lastDoc(text, statement.getFullStart()) ?? ""
  if (ts.isExportDeclaration(statement)) {
    const clause = statement.exportClause
    if (clause === undefined || ts.isNamespaceExport(clause)) {
      return [{ name: clause?.name.text ?? "*", doc, tags: ["since"] }]
    }
    return clause.elements.map((element) => ({
      name: element.name.text,
      doc: lastDoc(text, element.getFullStart()) ?? "",
      tags: ["since", "category"]
    }))
  }
  const names = ts.isVariableStatement(statement)
    ? statement.declarationList.declarations.map((declaration) => declaration.name.getText())
    : [ts.isExportAssignment(statement) ? "default" : (statement.name?.getText() ?? "(anonymous)")]
  return names.map((name) => ({ name, doc, tags: ["since", "category"] }))
}

/**
 * Each export of the given modules that lacks `@since` or `@category`, as `file#name: missing @tag`. An export
 * marked `@internal` or `@ignore` is left out, as docgen leaves it out of the reference; an overloaded function is
 * documented once, on its first signature.
 */
export const missingTags = (files) =>
  files.flatMap((file) => {
    const text = fs.readFileSync(file, "utf8")
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    const seen = new Set()
    return source.statements
      .filter(
        (statement) => isExported(statement) || ts.isExportDeclaration(statement) || ts.isExportAssignment(statement)
      )
      .flatMap((statement) =>
        exportsOf(statement, text).map((entry) => ({ ...entry, key: `${statement.kind}:${entry.name}` }))
      )
      .filter(({ key }) => !seen.has(key) && seen.add(key))
      .filter(({ doc }) => !/@(internal|ignore)\b/.test(doc))
      .flatMap(({ name, doc, tags }) => {
        const missing = tags.filter((tag) => !hasTag(doc, tag))
        return missing.length === 0 ? [] : [`${file}#${name}: missing ${missing.map((tag) => `@${tag}`).join(", ")}`]
      })
  })

/**
 * How many `@example` tags the doc comments of the given modules hold: docgen 0.5.2 checks those of a module's own
 * comment and of its functions, constants, interfaces, type aliases, namespaces and class methods, but not one on a
 * class itself, a property or a re-export, so its own count must come out the same.
 */
export const exampleCount = (files) =>
  files.reduce((count, file) => count + (fs.readFileSync(file, "utf8").match(/^\s*\*\s*@example\b/gm) ?? []).length, 0)

// The values a module exports by name (functions, constants, classes, namespaces; types left out), in source order.
const valueNames = (file) => {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const names = source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause
      if (clause !== undefined && ts.isNamespaceExport(clause)) return [clause.name.text]
      if (statement.isTypeOnly || clause === undefined || !ts.isNamedExports(clause)) return []
      return clause.elements.filter((element) => !element.isTypeOnly).map((element) => element.name.text)
    }
    if (!isExported(statement)) return []
    if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText())
    if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name) {
      return [statement.name.text]
    }
    return []
  })
  return [...new Set(names)]
}

/**
 * The README's "which package" table: one row per public module of each package (its exports map), with the path it
 * is imported from and the values it exports by name; the package's index re-exports each module as a namespace.
 */
export const importTable = (root, packages) => {
  const rows = packages.flatMap((name) => {
    const dir = path.join(root, "packages", name)
    const { name: packageName } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
    return publicModules(dir).public.map((module) => {
      const stem = module.replace(/\.ts$/, "")
      const from = stem === "index" ? packageName : `${packageName}/${stem}`
      const values = valueNames(path.join(dir, "src", module))
      return `| \`${from}\` | ${values.map((value) => `\`${value}\``).join(", ")} |`
    })
  })
  return ["| import from | its values (and the types beside them) |", "|---|---|", ...rows].join("\n")
}
