// Not `JSON.parse`: an error gives line and column without quoting a file that may hold secrets, and a repeated
// key is refused.
import * as Either from "effect/Either"
import type * as JsonValue from "../../JsonValue.js"

/** @internal */
export interface SyntaxProblem {
  readonly line: number
  readonly column: number
  readonly message: string
}

/** @internal */
export interface ParseOptions {
  readonly comments: boolean
}

class Fail {
  constructor(
    readonly offset: number,
    readonly message: string
  ) {}
}

// A stack overflow would otherwise be the answer to a hostile file.
const maxDepth = 256

const setOwn = (record: Record<string, JsonValue.JsonValue>, key: string, value: JsonValue.JsonValue): void => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
}

class Reader {
  i = 0
  constructor(
    readonly text: string,
    readonly options: ParseOptions
  ) {}

  skip(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0xfeff) {
        this.i++
      } else if (this.options.comments && c === 0x2f && this.text.charCodeAt(this.i + 1) === 0x2f) {
        while (this.i < this.text.length && this.text.charCodeAt(this.i) !== 0x0a) this.i++
      } else if (this.options.comments && c === 0x2f && this.text.charCodeAt(this.i + 1) === 0x2a) {
        const end = this.text.indexOf("*/", this.i + 2)
        if (end < 0) throw new Fail(this.i, "a comment is not closed")
        this.i = end + 2
      } else {
        return
      }
    }
  }

  expect(char: string, what: string): void {
    if (this.text[this.i] !== char)
      throw new Fail(
        this.i,
        this.i >= this.text.length ? `the this.text ends where ${what} was expected` : `expected ${what}`
      )
    this.i++
  }

  string(): string {
    const start = this.i
    this.expect('"', "a string")
    let out = ""
    let from = this.i
    for (;;) {
      if (this.i >= this.text.length) throw new Fail(start, "a string is not closed")
      const c = this.text.charCodeAt(this.i)
      if (c === 0x22) break
      if (c < 0x20) throw new Fail(this.i, "a string holds a control character (write it as an escape)")
      if (c !== 0x5c) {
        this.i++
        continue
      }
      out += this.text.slice(from, this.i)
      const e = this.text[this.i + 1]
      const simple = e === undefined ? undefined : escapes[e]
      if (simple !== undefined) {
        out += simple
        this.i += 2
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) {
        out += String.fromCharCode(parseInt(this.text.slice(this.i + 2, this.i + 6), 16))
        this.i += 6
      } else {
        throw new Fail(this.i, "a string holds an invalid escape")
      }
      from = this.i
    }
    out += this.text.slice(from, this.i)
    this.i++
    return out
  }

  number(): number {
    const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(this.text.slice(this.i, this.i + 400))
    if (match === null) throw new Fail(this.i, "expected a value")
    const value = Number(match[0])
    if (!Number.isFinite(value)) throw new Fail(this.i, "a number is too large")
    this.i += match[0].length
    return value
  }

  literal(word: string, value: JsonValue.JsonValue): JsonValue.JsonValue {
    if (this.text.startsWith(word, this.i)) {
      this.i += word.length
      return value
    }
    throw new Fail(this.i, "expected a value")
  }

  // A trailing comma only in JSONC.
  sequence(close: string, item: () => void): void {
    this.skip()
    if (this.text[this.i] === close) {
      this.i++
      return
    }
    for (;;) {
      item()
      this.skip()
      if (this.text[this.i] === close) {
        this.i++
        return
      }
      this.expect(",", `"," or "${close}"`)
      this.skip()
      if (this.text[this.i] === close) {
        if (!this.options.comments) throw new Fail(this.i, "a trailing comma is not allowed in JSON")
        this.i++
        return
      }
    }
  }

  value(depth: number): JsonValue.JsonValue {
    if (depth > maxDepth) throw new Fail(this.i, `the document nests deeper than ${maxDepth} levels`)
    this.skip()
    const c = this.text[this.i]
    if (c === "{") {
      this.i++
      const record: Record<string, JsonValue.JsonValue> = {}
      this.sequence("}", () => {
        const at = this.i
        const key = this.string()
        if (Object.hasOwn(record, key)) throw new Fail(at, "a key is repeated in one object")
        this.skip()
        this.expect(":", '":"')
        setOwn(record, key, this.value(depth + 1))
      })
      return record
    }
    if (c === "[") {
      this.i++
      const items: Array<JsonValue.JsonValue> = []
      this.sequence("]", () => {
        items.push(this.value(depth + 1))
      })
      return items
    }
    if (c === '"') return this.string()
    if (c === "t") return this.literal("true", true)
    if (c === "f") return this.literal("false", false)
    if (c === "n") return this.literal("null", null)
    if (this.i >= this.text.length) throw new Fail(this.i, "the this.text ends where a value was expected")
    return this.number()
  }
}

/** @internal */
export const parse = (text: string, options: ParseOptions): Either.Either<JsonValue.JsonValue, SyntaxProblem> => {
  const reader = new Reader(text, options)
  try {
    const result = reader.value(0)
    reader.skip()
    if (reader.i < text.length) throw new Fail(reader.i, "unexpected text after the document")
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
