/** C59: a worker's tool filter, checked where it was given and applied in the owner. */
import * as Either from "effect/Either"
import { InvalidInput } from "../McpWorkerError.js"
import type * as ToolFilter from "../ToolFilter.js"

/** @internal */
export const maxPatterns = 1024

/** @internal */
export const maxPatternLength = 256

// Meaningful in other glob dialects: refused, so no pattern silently matches otherwise.
const reserved = /[[\]{}\\]/

const control = /[\u0000-\u001f\u007f]/

const invalid = (path: string, message: string): Either.Either<never, InvalidInput> =>
  Either.left(new InvalidInput({ where: "config", path, message, delivery: "not_sent" }))

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)

const patterns = (value: unknown, path: string): Either.Either<ReadonlyArray<string> | undefined, InvalidInput> => {
  if (value === undefined) return Either.right(undefined)
  if (!Array.isArray(value)) return invalid(path, "must be an array of glob patterns")
  if (value.length > maxPatterns) return invalid(path, `must have at most ${maxPatterns} patterns`)
  const out: Array<string> = []
  for (let i = 0; i < value.length; i++) {
    const pattern: unknown = value[i]
    const at = `${path}[${i}]`
    if (typeof pattern !== "string") return invalid(at, "must be a glob pattern (a string)")
    if (pattern.length === 0) return invalid(at, "must be a glob pattern, not empty")
    if (pattern.length > maxPatternLength) return invalid(at, `must be at most ${maxPatternLength} characters`)
    if (control.test(pattern)) return invalid(at, "must not contain a control character")
    if (reserved.test(pattern)) return invalid(at, "must not contain [ ] { } or \\ (only * and ? are wildcards)")
    out.push(pattern)
  }
  return Either.right(out)
}

/** @internal */
export const check = (
  input: unknown,
  path = "options.tools"
): Either.Either<ToolFilter.ToolFilter | undefined, InvalidInput> => {
  if (input === undefined) return Either.right(undefined)
  if (!isPlainObject(input)) return invalid(path, "must be an object with allow and/or deny")
  for (const key of Object.keys(input)) {
    if (key !== "allow" && key !== "deny") return invalid(`${path}.${key}`, "is not an option of tools (allow, deny)")
  }
  const allow = patterns(input.allow, `${path}.allow`)
  if (Either.isLeft(allow)) return Either.left(allow.left)
  const deny = patterns(input.deny, `${path}.deny`)
  if (Either.isLeft(deny)) return Either.left(deny.left)
  if (allow.right === undefined && deny.right === undefined) return Either.right(undefined)
  return Either.right({
    ...(allow.right === undefined ? {} : { allow: allow.right }),
    ...(deny.right === undefined ? {} : { deny: deny.right })
  })
}

/** One backtrack point (the last `*`), so no server-chosen name makes matching exponential. @internal */
export const matches = (pattern: string, name: string): boolean => matchPoints(Array.from(pattern), Array.from(name))

const matchPoints = (pattern: ReadonlyArray<string>, name: ReadonlyArray<string>): boolean => {
  let p = 0
  let n = 0
  let star = -1
  let resume = 0
  while (n < name.length) {
    const c = pattern[p]
    if (c !== undefined && c !== "*" && (c === "?" || c === name[n])) {
      p++
      n++
    } else if (c === "*") {
      star = p++
      resume = n
    } else if (star >= 0) {
      p = star + 1
      n = ++resume
    } else {
      return false
    }
  }
  while (pattern[p] === "*") p++
  return p === pattern.length
}

/** @internal */
export interface Compiled {
  readonly allow: Matcher | undefined
  readonly deny: Matcher | undefined
}

interface Matcher {
  readonly literals: ReadonlySet<string>
  readonly globs: ReadonlyArray<ReadonlyArray<string>>
}

const matcherOf = (list: ReadonlyArray<string> | undefined): Matcher | undefined => {
  if (list === undefined) return undefined
  const literals = new Set<string>()
  const globs: Array<ReadonlyArray<string>> = []
  for (const pattern of list) {
    if (pattern.includes("*") || pattern.includes("?")) globs.push(Array.from(pattern))
    else literals.add(pattern)
  }
  return { literals, globs }
}

const anyMatch = (matcher: Matcher, name: string): boolean => {
  if (matcher.literals.has(name)) return true
  if (matcher.globs.length === 0) return false
  const points = Array.from(name)
  return matcher.globs.some((glob) => matchPoints(glob, points))
}

/** @internal */
export const compile = (filter: ToolFilter.ToolFilter): Compiled => ({
  allow: matcherOf(filter.allow),
  deny: matcherOf(filter.deny)
})

/** @internal */
export const allowsCompiled = (filter: Compiled, name: unknown): boolean =>
  typeof name === "string" &&
  (filter.allow === undefined || anyMatch(filter.allow, name)) &&
  (filter.deny === undefined || !anyMatch(filter.deny, name))

/** @internal */
export const allows = (filter: ToolFilter.ToolFilter | undefined, name: string): boolean =>
  filter === undefined || allowsCompiled(compile(filter), name)

/** A tool without a string name is left out: no filter can be said to allow it. @internal */
export const filterList = (filter: Compiled, result: unknown): unknown => {
  if (typeof result !== "object" || result === null) return result
  const tools = (result as { readonly tools?: unknown }).tools
  if (!Array.isArray(tools)) return result
  return {
    ...result,
    tools: tools.filter(
      (tool: unknown) =>
        typeof tool === "object" && tool !== null && allowsCompiled(filter, (tool as { name?: unknown }).name)
    )
  }
}
