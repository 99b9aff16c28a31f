// C102: @mcp-worker/caller loads nothing but its own modules: its sources import only one another (and `node:net` in
// the socket adapter), and a fresh `node` that imports every public module of its build resolves nothing else.
import { assert, describe, it } from "@effect/vitest"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("../..", import.meta.url))
const packageDir = path.join(root, "packages/caller")
const src = path.join(packageDir, "src")
const dist = path.join(packageDir, "dist")

// What a file under internal/socket/ may import besides the package's own modules: the platform's socket.
const adapterImports = new Set(["node:net"])
const isAdapter = (file: string) => path.relative(src, file).split(path.sep).slice(0, 2).join("/") === "internal/socket"

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : /\.ts$/.test(entry.name) ? [full] : []
  })

// Every module specifier of a file: imports, re-exports, `import()` and `import type` alike (a type-only import of
// another package would still make the build's declarations depend on it).
const specifiersOf = (file: string): Array<string> => {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const found: Array<string> = []
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      found.push((node.moduleSpecifier as ts.StringLiteral).text)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      found.push((node.argument.literal as ts.StringLiteral).text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const probe = `
import { registerHooks } from "node:module"
const resolved = []
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context)
    resolved.push({ url: result.url, parent: context.parentURL ?? null })
    return result
  }
})
for (const module of JSON.parse(process.argv[1])) await import(module)
process.stdout.write(JSON.stringify({ resolved }))
`

describe("@mcp-worker/caller (C102)", () => {
  it("declares no dependency", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"))
    assert.deepStrictEqual(manifest.dependencies, {})
    assert.isUndefined(manifest.peerDependencies)
  })

  it("imports only its own modules in its sources, and node:net only in the socket adapter", () => {
    const files = sourceFiles(src)
    assert.isAbove(files.length, 3)
    for (const file of files) {
      for (const specifier of specifiersOf(file)) {
        if (specifier.startsWith(".")) {
          const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts"))
          assert.isTrue(target.startsWith(src + path.sep) && fs.existsSync(target), `${file}: ${specifier}`)
        } else {
          assert.isTrue(isAdapter(file) && adapterImports.has(specifier), `${file} imports ${specifier}`)
        }
      }
    }
  })

  it("resolves nothing outside its build in a fresh node that imports every public module", async () => {
    execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-b", packageDir])
    const modules = fs
      .readdirSync(dist)
      .filter((file) => file.endsWith(".js"))
      .map((file) => (file === "index.js" ? "@mcp-worker/caller" : `@mcp-worker/caller/${file.replace(/\.js$/, "")}`))
    assert.include(modules, "@mcp-worker/caller/Operations")
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--input-type=module", "-e", probe, JSON.stringify(modules)],
        { cwd: root, timeout: 60_000 },
        (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)))
      )
    )
    const { resolved } = JSON.parse(output) as {
      resolved: Array<{ readonly url: string; readonly parent: string | null }>
    }
    const distUrl = new URL(`file://${fs.realpathSync(dist)}/`).href
    const ownModules = resolved.filter(({ parent }) => parent !== null && parent.startsWith(distUrl))
    assert.isAbove(ownModules.length, 3, output)
    for (const { url, parent } of resolved) {
      if (parent === null || !parent.startsWith(distUrl)) continue // the probe's own imports
      if (url.startsWith("node:")) {
        const from = path.relative(fs.realpathSync(dist), fileURLToPath(parent))
        assert.isTrue(
          from.startsWith(`internal${path.sep}socket${path.sep}`) && adapterImports.has(url),
          `${from}: ${url}`
        )
      } else {
        assert.isTrue(url.startsWith(distUrl), `${parent} loads ${url}`)
      }
    }
    assert.notInclude(output, "/node_modules/effect/")
  })
})
