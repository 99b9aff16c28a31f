// Fails when a file of packages/*/src passes 800 lines or a function in it passes 100: past those, a file is
// probably two concepts and a function three. A file holds one concept whole; 800 is a smoke alarm, not a place to cut. Functions are read with the TypeScript compiler's own parser; a
// function's lines run from its first to its last token, comments inside included.
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { files, root } from "./sourceFiles.mjs"

const maxFileLines = 800
const maxFunctionLines = 100

const problems = []
for (const file of files) {
  const text = fs.readFileSync(file, "utf8")
  const rel = path.relative(root, file)
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
  if (lines > maxFileLines) problems.push(`${rel}: ${lines} lines (at most ${maxFileLines})`)
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const length = last - first + 1
      if (length > maxFunctionLines) {
        const name = node.name?.getText(source) ?? ts.SyntaxKind[node.kind]
        problems.push(`${rel}:${first + 1}: a function of ${length} lines (${name}; at most ${maxFunctionLines})`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}
for (const problem of problems) console.error(problem)
if (problems.length > 0) process.exit(1)
console.log(
  `${files.length} files of packages/*/src: none over ${maxFileLines} lines, no function over ${maxFunctionLines}`
)
