/**
 * Scanned once: a line costs one copy and one decode; 0x0a is never inside a UTF-8 sequence. Built-ins only: the
 * owner process's entry uses it before anything loads.
 *
 * @internal
 */

/** The line is not bounded then. @internal */
export interface Sink<A> {
  readonly keepBytes?: number | undefined
  /** Read during the call. */
  readonly write: (bytes: Buffer, from: number, to: number) => void
  readonly end: (line: A | undefined) => void
}

/** A larger bound, a sink for the rest, or `undefined`: skipped. @internal */
export type Overflow<A> = number | Sink<A> | undefined

/** @internal */
export interface Options<A> {
  readonly decode: (bytes: Buffer, start: number, end: number) => A
  /** A `\r` before the newline counts, the newline not. */
  readonly maxLineBytes: number
  readonly dropCarriageReturn?: boolean
  /** `false`: `push` returns the chunk's rest. */
  readonly onLine: (line: A) => boolean | void
  /** Gets the bytes after `held`. */
  readonly onOverflow?: (held: ReadonlyArray<Buffer>, bytes: number) => Overflow<A>
  readonly onLineStart?: () => Sink<A> | undefined
}

/** @internal */
export const text = (bytes: Buffer, start: number, end: number): string => bytes.toString("utf8", start, end)

/** @internal */
export const bytes = (bytes: Buffer, start: number, end: number): Buffer => bytes.subarray(start, end)

type Line<A> = Between | Held | Skipped | Streamed<A>
type Between = { readonly _tag: "Between" }
type Held = { readonly _tag: "Held"; readonly bound: number }
type Skipped = { readonly _tag: "Skipped" }
type Streamed<A> = { readonly _tag: "Streamed"; readonly sink: Sink<A>; kept: boolean }

const between: Between = { _tag: "Between" }
const skipped: Skipped = { _tag: "Skipped" }

const newline = 0x0a
const carriageReturn = 0x0d

/** @internal */
export class LineSplitter<A> {
  private pieces: Array<Buffer> = []
  private heldBytes = 0
  private line: Line<A> = between
  private readonly within: Held

  constructor(private readonly options: Options<A>) {
    this.within = { _tag: "Held", bound: options.maxLineBytes }
  }

  get bufferedBytes(): number {
    return this.heldBytes
  }

  /** Must not change: its unfinished line is a view of it. */
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

  clear(): void {
    this.release()
    if (this.line._tag !== "Between") this.line = skipped
  }

  private begin(): Line<A> {
    const sink = this.options.onLineStart?.()
    return sink === undefined ? this.within : { _tag: "Streamed", sink, kept: sink.keepBytes !== undefined }
  }

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

  private keep(chunk: Buffer, start: number): void {
    this.pieces.push(start === 0 ? chunk : chunk.subarray(start))
    this.heldBytes += chunk.length - start
  }

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
