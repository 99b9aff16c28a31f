// Messages name variables, never their values.
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"

/** @internal */
export type Variable = "workspaceFolder" | "workspaceFolderBasename" | "userHome" | "pathSeparator"

/** @internal */
export type Part =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Env"; readonly name: string; readonly fallback: string | undefined }
  | { readonly _tag: "Input"; readonly id: string }
  | { readonly _tag: "Variable"; readonly variable: Variable }

/** Claude Desktop writes none; the document form adds `${env:NAME:-default}`, and `${$}` for a literal `$`. @internal */
export type Syntax = "none" | "cursor" | "vscode" | "shell" | "document"

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/
const inputId = /^[A-Za-z0-9_.-]+$/

const variables: Record<string, Variable> = {
  workspaceFolder: "workspaceFolder",
  workspaceFolderBasename: "workspaceFolderBasename",
  userHome: "userHome",
  pathSeparator: "pathSeparator",
  "/": "pathSeparator"
}

const reference = (body: string, syntax: Syntax): Either.Either<Part | string, string> => {
  if (syntax === "shell") {
    const at = body.indexOf(":-")
    const name = at < 0 ? body : body.slice(0, at)
    if (!envName.test(name)) return Either.left("holds a ${…} reference whose name is not a variable name")
    return Either.right({ _tag: "Env", name, fallback: at < 0 ? undefined : body.slice(at + 2) })
  }
  if (syntax === "document" && body === "$") return Either.right("$")
  if (body.startsWith("env:")) {
    const rest = body.slice(4)
    const at = syntax === "document" ? rest.indexOf(":-") : -1
    const name = at < 0 ? rest : rest.slice(0, at)
    if (!envName.test(name)) return Either.left("holds a ${env:…} reference whose name is not a variable name")
    return Either.right({ _tag: "Env", name, fallback: at < 0 ? undefined : rest.slice(at + 2) })
  }
  if (body.startsWith("input:") && (syntax === "vscode" || syntax === "document")) {
    const id = body.slice(6)
    if (!inputId.test(id)) return Either.left("holds an ${input:…} reference whose id is not valid")
    return Either.right({ _tag: "Input", id })
  }
  const variable = Object.hasOwn(variables, body) ? variables[body] : undefined
  if (variable !== undefined) return Either.right({ _tag: "Variable", variable })
  const who = syntax === "cursor" ? "Cursor" : syntax === "vscode" ? "VS Code" : "a config document"
  return Either.left(`holds a \${…} reference to a variable ${who} does not define`)
}

/** @internal */
export const parse = (text: string, syntax: Syntax): Either.Either<ReadonlyArray<Part>, string> => {
  if (syntax === "none") return Either.right(text.length === 0 ? [] : [{ _tag: "Text", text }])
  const parts: Array<Part> = []
  let literal = ""
  let i = 0
  while (i < text.length) {
    const start = text.indexOf("${", i)
    if (start < 0) break
    const end = text.indexOf("}", start + 2)
    if (end < 0) return Either.left("holds a ${ that is not closed by }")
    literal += text.slice(i, start)
    const part = reference(text.slice(start + 2, end), syntax)
    if (Either.isLeft(part)) return Either.left(part.left)
    if (typeof part.right === "string") {
      literal += part.right
    } else {
      if (literal.length > 0) parts.push({ _tag: "Text", text: literal })
      literal = ""
      parts.push(part.right)
    }
    i = end + 1
  }
  literal += text.slice(i)
  if (literal.length > 0) parts.push({ _tag: "Text", text: literal })
  return Either.right(parts)
}

/** `parse(format(parts), "document")` gives them back. @internal */
export const format = (parts: ReadonlyArray<Part>): string =>
  parts
    .map((part) => {
      switch (part._tag) {
        case "Text":
          return part.text.replaceAll("${", "${$}{")
        case "Env":
          return part.fallback === undefined ? `\${env:${part.name}}` : `\${env:${part.name}:-${part.fallback}}`
        case "Input":
          return `\${input:${part.id}}`
        case "Variable":
          return `\${${part.variable}}`
      }
    })
    .join("")

/** @internal */
export const hasReference = (parts: ReadonlyArray<Part>): boolean => parts.some((part) => part._tag !== "Text")

/** Each answers `undefined` for what it does not know. @internal */
export interface Context {
  readonly env: (name: string) => string | undefined
  readonly input: (id: string) => string | Redacted.Redacted<string> | undefined
  readonly variable: (variable: Variable) => string | undefined
}

/** @internal */
export const expand = (parts: ReadonlyArray<Part>, context: Context): Either.Either<string, string> => {
  let out = ""
  for (const part of parts) {
    switch (part._tag) {
      case "Text": {
        out += part.text
        break
      }
      case "Env": {
        const value = context.env(part.name) ?? part.fallback
        if (value === undefined) {
          return Either.left(`names the environment variable ${JSON.stringify(part.name)}, which is not set`)
        }
        out += value
        break
      }
      case "Input": {
        const value = context.input(part.id)
        if (value === undefined) {
          return Either.left(`names the input ${JSON.stringify(part.id)}, which was not given (options.inputs)`)
        }
        out += Redacted.isRedacted(value) ? Redacted.value(value) : value
        break
      }
      case "Variable": {
        const value = context.variable(part.variable)
        if (value === undefined) {
          return Either.left(`uses \${${part.variable}}, which was not given (options.variables.${part.variable})`)
        }
        out += value
        break
      }
    }
  }
  return Either.right(out)
}
