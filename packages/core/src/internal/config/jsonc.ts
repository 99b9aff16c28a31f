/**
 * JSON with comments, as VS Code reads its `mcp.json`: `//` and `/* *\/` comments and trailing commas are allowed,
 * everything else is strict JSON. A hand-written parser rather than `JSON.parse`, so that a syntax error says where
 * it is (line and column) without quoting the file, which may hold secrets, and so that a repeated key is refused
 * instead of silently winning.
 */
import * as Either from "effect/Either"
import type * as JsonValue from "../../JsonValue.js"

/** Why the text is not JSON, and where. @internal */
export interface SyntaxProblem {
  readonly line: number
  readonly column: number
  readonly message: string
}

/** @internal */
export interface ParseOptions {
  /** Accept comments and trailing commas. */
  readonly comments: boolean
}

class Fail {
  constructor(
    readonly offset: number,
    readonly message: string
  ) {}
}

// Deep enough for any config file; a stack overflow would otherwise be the answer to a hostile one.
const maxDepth = 256

const setOwn = (record: Record<string, JsonValue.JsonValue>, key: string, value: JsonValue.JsonValue): void => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
}

/** Parses JSON (or JSONC) text into plain data, or says where and why it is not. @internal */
export const parse = (text: string, options: ParseOptions): Either.Either<JsonValue.JsonValue, SyntaxProblem> => {
  let i = 0

  const skip = (): void => {
    for (;;) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0xfeff) {
        i++
      } else if (options.comments && c === 0x2f && text.charCodeAt(i + 1) === 0x2f) {
        while (i < text.length && text.charCodeAt(i) !== 0x0a) i++
      } else if (options.comments && c === 0x2f && text.charCodeAt(i + 1) === 0x2a) {
        const end = text.indexOf("*/", i + 2)
        if (end < 0) throw new Fail(i, "a comment is not closed")
        i = end + 2
      } else {
        return
      }
    }
  }

  const expect = (char: string, what: string): void => {
    if (text[i] !== char)
      throw new Fail(i, i >= text.length ? `the text ends where ${what} was expected` : `expected ${what}`)
    i++
  }

  const string = (): string => {
    const start = i
    expect('"', "a string")
    let out = ""
    let from = i
    for (;;) {
      if (i >= text.length) throw new Fail(start, "a string is not closed")
      const c = text.charCodeAt(i)
      if (c === 0x22) break
      if (c < 0x20) throw new Fail(i, "a string holds a control character (write it as an escape)")
      if (c !== 0x5c) {
        i++
        continue
      }
      out += text.slice(from, i)
      const e = text[i + 1]
      const simple = e === undefined ? undefined : escapes[e]
      if (simple !== undefined) {
        out += simple
        i += 2
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16))
        i += 6
      } else {
        throw new Fail(i, "a string holds an invalid escape")
      }
      from = i
    }
    out += text.slice(from, i)
    i++
    return out
  }

  const number = (): number => {
    const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400))
    if (match === null) throw new Fail(i, "expected a value")
    const value = Number(match[0])
    if (!Number.isFinite(value)) throw new Fail(i, "a number is too large")
    i += match[0].length
    return value
  }

  const literal = (word: string, value: JsonValue.JsonValue): JsonValue.JsonValue => {
    if (text.startsWith(word, i)) {
      i += word.length
      return value
    }
    throw new Fail(i, "expected a value")
  }

  // Items of an array or members of an object up to `close`, with a trailing comma only in JSONC.
  const sequence = (close: string, item: () => void): void => {
    skip()
    if (text[i] === close) {
      i++
      return
    }
    for (;;) {
      item()
      skip()
      if (text[i] === close) {
        i++
        return
      }
      expect(",", `"," or "${close}"`)
      skip()
      if (text[i] === close) {
        if (!options.comments) throw new Fail(i, "a trailing comma is not allowed in JSON")
        i++
        return
      }
    }
  }

  const value = (depth: number): JsonValue.JsonValue => {
    if (depth > maxDepth) throw new Fail(i, `the document nests deeper than ${maxDepth} levels`)
    skip()
    const c = text[i]
    if (c === "{") {
      i++
      const record: Record<string, JsonValue.JsonValue> = {}
      sequence("}", () => {
        const at = i
        const key = string()
        if (Object.hasOwn(record, key)) throw new Fail(at, "a key is repeated in one object")
        skip()
        expect(":", '":"')
        setOwn(record, key, value(depth + 1))
      })
      return record
    }
    if (c === "[") {
      i++
      const items: Array<JsonValue.JsonValue> = []
      sequence("]", () => {
        items.push(value(depth + 1))
      })
      return items
    }
    if (c === '"') return string()
    if (c === "t") return literal("true", true)
    if (c === "f") return literal("false", false)
    if (c === "n") return literal("null", null)
    if (i >= text.length) throw new Fail(i, "the text ends where a value was expected")
    return number()
  }

  try {
    const result = value(0)
    skip()
    if (i < text.length) throw new Fail(i, "unexpected text after the document")
    return Either.right(result)
  } catch (e) {
    if (!(e instanceof Fail)) throw e
    return Either.left({ ...position(text, e.offset), message: e.message })
  }
}

const escapes: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t"
}

const position = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  let line = 1
  let start = 0
  for (let j = 0; j < offset && j < text.length; j++) {
    if (text.charCodeAt(j) === 0x0a) {
      line++
      start = j + 1
    }
  }
  return { line, column: offset - start + 1 }
}
