// Streams a result of any size to a file without holding it. Not a validator: an invalid line never completes its
// result, so it is never placed.

const quote = 0x22
const backslash = 0x5c
const openBrace = 0x7b
const closeBrace = 0x7d
const openBracket = 0x5b
const closeBracket = 0x5d
const colon = 0x3a
const comma = 0x2c

// Longer keys are none of those looked for.
const maxKeyBytes = 16

type Target = "id" | "isError" | "resultType" | "text"

// The most kept of each value looked for; a preview keeps the scanner's `previewBytes`.
const keptBytes = { id: 256, isError: 8, resultType: 64 } as const

interface Capture {
  readonly target: Target
  readonly cap: number
  readonly parts: Array<Buffer>
  bytes: number
  from: number
  /** Ends at its closing quote, not at a delimiter. */
  readonly string: boolean
}

const captureOf = (target: Target, cap: number, from: number, string: boolean): Capture => ({
  target,
  cap,
  parts: [],
  bytes: 0,
  from,
  string
})

const isDelimiter = (byte: number) =>
  byte === comma || byte === closeBrace || byte === closeBracket || byte === 0x20 || byte === 0x09 || byte === 0x0d

/** @internal */
export class ResponseScanner {
  /** By depth (index 0 is depth 1). */
  private readonly objects: Array<boolean> = []
  /** `undefined` for arrays and unreadable keys. */
  private readonly keys: Array<string | undefined> = []
  private expectKey = false
  private inString = false
  private escaped = false
  private key: { parts: Array<number>; long: boolean } | undefined
  private primitive = false
  private capture: Capture | undefined
  private resultFrom: number | undefined
  /** -1: none; -2: not searched in this piece. */
  private nextQuote = -1
  private nextBackslash = -1

  id: string | undefined
  /** An object or array that ended. */
  resultComplete = false
  hasError = false
  isErrorText: string | undefined
  /** Quotes included. */
  resultTypeText: string | undefined
  /** At most `previewBytes`. */
  textRaw: Buffer | undefined
  textComplete = false

  constructor(
    private readonly onResult: (bytes: Buffer) => void,
    private readonly previewBytes: number
  ) {}

  feed(piece: Buffer, from: number, to: number): void {
    if (this.resultFrom !== undefined) this.resultFrom = from
    if (this.capture !== undefined) this.capture.from = from
    this.nextQuote = -2
    this.nextBackslash = -2
    let i = from
    while (i < to) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false
          if (this.key !== undefined) this.keyByte(piece[i]!)
          i++
          continue
        }
        // Strings are crossed with native searches, not byte by byte.
        const end = this.key !== undefined ? i + 1 : this.nextSpecial(piece, i, to)
        if (this.key !== undefined) {
          const byte = piece[i]!
          if (byte === backslash) this.escaped = true
          if (byte === quote) this.endKey()
          else this.keyByte(byte)
          i = end
          continue
        }
        if (end === -1) break
        if (piece[end] === backslash) {
          this.escaped = true
          i = end + 1
          continue
        }
        this.inString = false
        this.endValue(piece, end + 1)
        i = end + 1
        continue
      }
      const byte = piece[i]!
      if (this.primitive) {
        if (!isDelimiter(byte)) {
          i++
          continue
        }
        this.primitive = false
        this.endValue(piece, i)
      }
      switch (byte) {
        case quote:
          this.inString = true
          if (this.expectKey && this.objects[this.objects.length - 1] === true) {
            this.key = { parts: [], long: false }
          } else {
            this.beginValue(piece, i, true)
          }
          break
        case openBrace:
        case openBracket:
          this.beginValue(piece, i, false)
          this.objects.push(byte === openBrace)
          this.keys.push(undefined)
          this.expectKey = byte === openBrace
          break
        case closeBrace:
        case closeBracket:
          this.objects.pop()
          this.keys.pop()
          this.expectKey = false
          if (this.resultFrom !== undefined && this.objects.length === 1) {
            this.onResult(piece.subarray(this.resultFrom, i + 1))
            this.resultFrom = undefined
            this.resultComplete = true
          }
          break
        case colon:
          this.expectKey = false
          break
        case comma:
          this.expectKey = this.objects[this.objects.length - 1] === true
          break
        case 0x20:
        case 0x09:
        case 0x0d:
          break
        default:
          this.beginValue(piece, i, false)
          this.primitive = true
      }
      i++
    }
    if (this.resultFrom !== undefined && this.resultFrom < to) this.onResult(piece.subarray(this.resultFrom, to))
    if (this.capture !== undefined) this.keep(this.capture, piece, to)
  }

  /** A number or literal that ran to the line's end is complete. */
  end(): void {
    if (this.primitive && this.capture !== undefined) this.finish(this.capture)
    this.primitive = false
  }

  /** Each is searched for again only once passed. */
  private nextSpecial(piece: Buffer, from: number, to: number): number {
    if (this.nextQuote !== -1 && this.nextQuote < from) this.nextQuote = piece.indexOf(quote, from)
    if (this.nextBackslash !== -1 && this.nextBackslash < from) this.nextBackslash = piece.indexOf(backslash, from)
    const q = this.nextQuote
    const b = this.nextBackslash
    const first = q === -1 ? b : b === -1 ? q : Math.min(q, b)
    return first === -1 || first >= to ? -1 : first
  }

  private keyByte(byte: number) {
    const key = this.key!
    if (key.parts.length < maxKeyBytes) key.parts.push(byte)
    else key.long = true
  }

  private endKey() {
    const key = this.key!
    this.key = undefined
    this.inString = false
    this.keys[this.keys.length - 1] = key.long ? undefined : String.fromCharCode(...key.parts)
  }

  private beginValue(piece: Buffer, at: number, string: boolean) {
    const depth = this.objects.length
    const key = this.keys[depth - 1]
    if (depth === 1) {
      if (
        key === "result" &&
        !string &&
        piece[at] !== undefined &&
        (piece[at] === openBrace || piece[at] === openBracket)
      ) {
        this.resultFrom = at
      } else if (key === "id") {
        this.capture = captureOf("id", keptBytes.id, at, string)
      } else if (key === "error") {
        this.hasError = true
      }
      return
    }
    if (this.keys[0] !== "result" || this.objects[0] !== true || this.objects[1] !== true) return
    if (depth === 2 && key === "isError") {
      this.capture = captureOf("isError", keptBytes.isError, at, string)
    } else if (depth === 2 && key === "resultType") {
      this.capture = captureOf("resultType", keptBytes.resultType, at, string)
    } else if (
      depth === 4 &&
      string &&
      key === "text" &&
      this.textRaw === undefined &&
      this.keys[1] === "content" &&
      this.objects[2] === false &&
      this.objects[3] === true
    ) {
      this.capture = captureOf("text", this.previewBytes, at, string)
    }
  }

  private keep(capture: Capture, piece: Buffer, to: number) {
    const room = capture.cap - capture.bytes
    if (room > 0 && to > capture.from) {
      const part = piece.subarray(capture.from, Math.min(to, capture.from + room))
      // Copied, so the piece it came from can be freed.
      capture.parts.push(Buffer.from(part))
      capture.bytes += part.length
    }
    capture.from = to
  }

  private endValue(piece: Buffer, to: number) {
    const capture = this.capture
    if (capture === undefined) return
    this.keep(capture, piece, to)
    this.finish(capture)
  }

  private finish(capture: Capture) {
    this.capture = undefined
    const raw = Buffer.concat(capture.parts)
    switch (capture.target) {
      case "id":
        this.id = raw.toString("utf8")
        return
      case "isError":
        this.isErrorText = raw.toString("utf8")
        return
      case "resultType":
        this.resultTypeText = raw.toString("utf8")
        return
      case "text":
        // Complete only if the closing quote was kept.
        this.textComplete = raw.length >= 2 && raw.length < capture.cap
        this.textRaw = raw.subarray(1, this.textComplete ? raw.length - 1 : raw.length)
    }
  }
}

/** What cannot be decoded at the end (a cut UTF-8 sequence or escape) is dropped. @internal */
export const decodeStringStart = (raw: Buffer, units: number): string => {
  let end = raw.length
  // Back off a cut UTF-8 sequence.
  if (end > 0 && (raw[end - 1]! & 0x80) !== 0) {
    let lead = end - 1
    while (lead > 0 && (raw[lead]! & 0xc0) === 0x80) lead--
    const need = raw[lead]! >= 0xf0 ? 4 : raw[lead]! >= 0xe0 ? 3 : raw[lead]! >= 0xc0 ? 2 : 1
    if (lead + need > end) end = lead
  }
  // A cut escape (`\`, `\u12`) fails to parse: drop up to six bytes until it does.
  for (let cut = 0; cut <= 6 && cut <= end; cut++) {
    const text = parseString(raw.subarray(0, end - cut))
    if (text !== undefined) return truncateUnits(text, units)
  }
  return ""
}

const parseString = (raw: Buffer): string | undefined => {
  const text = `"${raw.toString("utf8")}"`
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

const truncateUnits = (text: string, units: number): string => {
  if (text.length <= units) return text
  const code = text.charCodeAt(units - 1)
  // Never end on the first half of a surrogate pair.
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? units - 1 : units)
}
