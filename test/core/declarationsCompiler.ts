// Compiles TypeScript text in memory with the repository's compiler (`strict: true`, no emit), for the tests of
// rendered tool declarations. Library files are parsed once and shared by every program.
import ts from "typescript"

const options: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts"],
  types: [],
  noUnusedLocals: false,
  skipLibCheck: true
}

const base = ts.createCompilerHost(options)
const libraries = new Map<string, ts.SourceFile | undefined>()

/** The diagnostics of a program made of `files` (virtual paths under `/virtual/`), each as one readable line. */
export const diagnostics = (files: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const host: ts.CompilerHost = {
    ...base,
    fileExists: (name) => Object.hasOwn(files, name) || base.fileExists(name),
    directoryExists: (name) => name === "/virtual" || name.startsWith("/virtual/") || base.directoryExists!(name),
    readFile: (name) => (Object.hasOwn(files, name) ? files[name] : base.readFile(name)),
    getSourceFile: (name, language) => {
      if (Object.hasOwn(files, name)) return ts.createSourceFile(name, files[name], language, true)
      if (!libraries.has(name)) libraries.set(name, base.getSourceFile(name, language))
      return libraries.get(name)
    }
  }
  const program = ts.createProgram(Object.keys(files), options, host)
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file !== undefined && d.start !== undefined
        ? (() => {
            const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
            return `${d.file.fileName}:${line + 1}:${character + 1} `
          })()
        : ""
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
  })
}

/** Compiles one rendered declarations file (and an optional check file importing it as `./tools`). */
export const compile = (declarations: string, check?: string): ReadonlyArray<string> =>
  diagnostics(
    check === undefined
      ? { "/virtual/tools.ts": declarations }
      : { "/virtual/tools.ts": declarations, "/virtual/check.ts": check }
  )
