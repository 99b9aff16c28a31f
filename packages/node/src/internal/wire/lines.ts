/**
 * Newline-delimited lines cut from a byte stream, as every line protocol of the library reads them: a stdio server's
 * stdout, an owner process's data pipe and a listener's socket. A chunk is kept as it came, neither copied nor decoded,
 * until its line ends, and is searched for newlines once: a line of any size costs one copy (none within one chunk)
 * and one decode, and nothing is scanned twice. 0x0a never occurs inside a multi-byte UTF-8 sequence, so lines are cut
 * on bytes and decoded whole.
 *
 * Node built-ins only: the owner process's entry reads its pipe with it before it loads anything else.
 *
 * @internal
 */

/**
 * What reads a line as it arrives instead of having it held whole: the line is not bounded then, and only what the
 * sink asks to keep is held.
 *
 * @internal
 */
export interface Sink<A> {
  /** The line is held too while it has at most this many bytes, and handed to `end` if it ends by then. */
  readonly keepBytes?: number | undefined
  /** The next bytes of the line, `bytes[from, to)`, to be read during the call. */
  readonly write: (bytes: Buffer, from: number, to: number) => void
  /** The line ended; `line` is it if it was kept whole. */
  readonly end: (line: A | undefined) => void
}

/**
 * What becomes of a line past its bound: a larger bound (its overflow is called again if the line passes that too), a
 * sink for the rest of it, or (`undefined`) nothing: the rest is skipped up to its newline.
 *
 * @internal
 */
export type Overflow<A> = number | Sink<A> | undefined

/** @internal */
export interface Options<A> {
  /** A whole line as its reader takes it, from `bytes[start, end)` (without its newline). */
  readonly decode: (bytes: Buffer, start: number, end: number) => A
  /** The bytes a line may have (a `\r` before its newline counted, the newline not) before `onOverflow`. */
  readonly maxLineBytes: number
  /** A `\r` before a line's newline is no part of the line (it still counts toward the bound). */
  readonly dropCarriageReturn?: boolean
  /** A complete line. `false` reads no further in the chunk: `push` returns its rest. */
  readonly onLine: (line: A) => boolean | void
  /**
   * The line passed its bound, with `bytes` so far, all of them in `held`. Without it, the rest is skipped. A sink it
   * returns gets the bytes after `held`, and is not handed the line at its end.
   */
  readonly onOverflow?: (held: ReadonlyArray<Buffer>, bytes: number) => Overflow<A>
  /** A line begins (its first byte, or its newline, arrived): a sink it returns takes the line instead. */
  readonly onLineStart?: () => Sink<A> | undefined
}

/** Decodes a line as UTF-8 text. @internal */
export const text = (bytes: Buffer, start: number, end: number): string => bytes.toString("utf8", start, end)

/** Takes a line as its bytes (a view of the chunk, or of the one copy of a line that spans chunks). @internal */
export const bytes = (bytes: Buffer, start: number, end: number): Buffer => bytes.subarray(start, end)

/** Where the splitter is in the stream: between lines, or in one it holds, skips or hands to a sink. */
type Line<A> = Between | Held | Skipped | Streamed<A>
type Between = { readonly _tag: "Between" }
type Held = { readonly _tag: "Held"; readonly bound: number }
type Skipped = { readonly _tag: "Skipped" }
type Streamed<A> = { readonly _tag: "Streamed"; readonly sink: Sink<A>; kept: boolean }

const between: Between = { _tag: "Between" }
const skipped: Skipped = { _tag: "Skipped" }

const newline = 0x0a
const carriageReturn = 0x0d

/**
 * The splitter of one stream.
 *
 * @internal
 */
export class LineSplitter<A> {
  private pieces: Array<Buffer> = []
  private heldBytes = 0
  private line: Line<A> = between
  /** A line begun without a sink: held, within `maxLineBytes`. */
  private readonly within: Held

  constructor(private readonly options: Options<A>) {
    this.within = { _tag: "Held", bound: options.maxLineBytes }
  }

  /** The bytes held of the unfinished line. */
  get bufferedBytes(): number {
    return this.heldBytes
  }

  /**
   * Reads `chunk`, which must not change afterwards (its unfinished line is held as a view of it). What is left of it
   * when `onLine` stopped the reading is returned, unread.
   */
  push(chunk: Buffer): Buffer | undefined {
    let start = 0
    while (start < chunk.length) {
      const at = chunk.indexOf(newline, start)
      const ends = at !== -1
      if (this.line._tag === "Between") this.line = this.begin()
      const more = this.read(chunk, start, ends ? at : chunk.length, ends)
      if (!ends) return undefined
      start = at + 1
      if (more === false && start < chunk.length) return chunk.subarray(start)
    }
    return undefined
  }

  /** Lets go of the unfinished line: what is held of it is dropped, and the rest of it skipped. */
  clear(): void {
    this.release()
    if (this.line._tag !== "Between") this.line = skipped
  }

  private begin(): Line<A> {
    const sink = this.options.onLineStart?.()
    return sink === undefined ? this.within : { _tag: "Streamed", sink, kept: sink.keepBytes !== undefined }
  }

  /** `chunk[start, end)` is the next part of the line, its last if `ends`. */
  private read(chunk: Buffer, start: number, end: number, ends: boolean): boolean | void {
    const line = this.line
    switch (line._tag) {
      case "Held":
        return this.hold(line.bound, chunk, start, end, ends)
      case "Streamed":
        return this.stream(line, chunk, start, end, ends)
      case "Skipped":
        if (ends) this.line = between
        return
    }
  }

  private hold(bound: number, chunk: Buffer, start: number, end: number, ends: boolean): boolean | void {
    const bytes = this.heldBytes + end - start
    if (bytes > bound) return this.overflow(chunk, start, end, ends, bytes)
    if (!ends) return this.keep(chunk, start)
    this.line = between
    return this.options.onLine(this.take(chunk, start, end))
  }

  private overflow(chunk: Buffer, start: number, end: number, ends: boolean, bytes: number): boolean | void {
    const next = this.options.onOverflow?.([...this.pieces, chunk.subarray(start, end)], bytes)
    if (typeof next === "number") {
      this.line = { _tag: "Held", bound: next }
      return this.hold(next, chunk, start, end, ends)
    }
    this.release()
    if (next === undefined) {
      this.line = ends ? between : skipped
    } else if (ends) {
      this.line = between
      next.end(undefined)
    } else {
      this.line = { _tag: "Streamed", sink: next, kept: false }
    }
  }

  private stream(line: Streamed<A>, chunk: Buffer, start: number, end: number, ends: boolean) {
    line.sink.write(chunk, start, end)
    if (line.kept && this.heldBytes + end - start > line.sink.keepBytes!) {
      line.kept = false
      this.release()
    }
    if (!ends) {
      if (line.kept) this.keep(chunk, start)
      return
    }
    this.line = between
    line.sink.end(line.kept ? this.take(chunk, start, end) : undefined)
  }

  /** Holds the rest of `chunk`, from `start`: the unfinished line. */
  private keep(chunk: Buffer, start: number): void {
    this.pieces.push(start === 0 ? chunk : chunk.subarray(start))
    this.heldBytes += chunk.length - start
  }

  /** The line that ends at `chunk[end]`: what is held, and `chunk[start, end)`. */
  private take(chunk: Buffer, start: number, end: number): A {
    let bytes = chunk
    let from = start
    let to = end
    if (this.pieces.length > 0) {
      if (end > start) this.pieces.push(chunk.subarray(start, end))
      to = this.heldBytes + end - start
      bytes = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, to)
      from = 0
      this.release()
    }
    if (this.options.dropCarriageReturn === true && to > from && bytes[to - 1] === carriageReturn) to--
    return this.options.decode(bytes, from, to)
  }

  private release(): void {
    this.pieces = []
    this.heldBytes = 0
  }
}

/** @internal */
export const make = <A>(options: Options<A>): LineSplitter<A> => new LineSplitter(options)
