// The line splitter every line protocol reads with (lines.ts): however a stream is cut into chunks, it gives the
// lines that splitting the whole stream gives, holds only the unfinished line (and says how much), and bounds it.
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Lines from "../../packages/node/src/internal/wire/lines.js"

/** A line's bytes without its newline: any bytes but 0x0a, a `\r` and multi-byte sequences among them. */
const lineBytes = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x0d, 0x22, 0x7b, 0xe2, 0x82, 0xac)), {
    maxLength: 48
  })
  .map((bytes) => Buffer.from(bytes.map((byte) => (byte === 0x0a ? 0x0b : byte))))

/** Lines joined by newlines, the last perhaps unfinished. */
const streamOf = (lines: ReadonlyArray<Buffer>, finished: boolean): Buffer =>
  Buffer.concat(lines.flatMap((line, i) => (i < lines.length - 1 || finished ? [line, Buffer.from("\n")] : [line])))

/** `bytes` cut at `cuts` (any positions, repeated or out of order), as fresh chunks. */
const cut = (bytes: Buffer, cuts: ReadonlyArray<number>): Array<Buffer> => {
  const at = [...new Set(cuts.map((position) => position % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<Buffer> = []
  let from = 0
  for (const to of [...at, bytes.length]) {
    chunks.push(Buffer.from(bytes.subarray(from, to)))
    from = to
  }
  return chunks
}

const stream = fc.record({
  lines: fc.array(lineBytes, { minLength: 1, maxLength: 12 }),
  finished: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 24 })
})

/** What the stream holds after its last newline: the unfinished line. */
const tailOf = (bytes: Buffer): number => bytes.length - (bytes.lastIndexOf(0x0a) + 1)

/** A copy of a line as the splitter hands it (a view of a chunk, valid while the chunk is). */
const copy = (bytes: Buffer, start: number, end: number): Buffer => Buffer.from(bytes.subarray(start, end))

describe("Lines", () => {
  it("any cut of a stream gives the lines of the whole, and holds exactly the unfinished line", () => {
    fc.assert(
      fc.property(stream, ({ cuts, finished, lines }) => {
        const bytes = streamOf(lines, finished)
        const got: Array<Buffer> = []
        const splitter = Lines.make({ decode: copy, maxLineBytes: Infinity, onLine: (line) => void got.push(line) })
        let read = 0
        for (const chunk of cut(bytes, cuts)) {
          assert.strictEqual(splitter.push(chunk), undefined)
          read += chunk.length
          assert.strictEqual(splitter.bufferedBytes, tailOf(bytes.subarray(0, read)))
        }
        assert.deepStrictEqual(got, finished ? lines : lines.slice(0, -1))
      }),
      { numRuns: 500 }
    )
  })

  it("text lines decode whole: a multi-byte character cut between chunks arrives intact", () => {
    const line = fc.string({ unit: "binary", maxLength: 24 }).map((text) => text.replaceAll("\n", " "))
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 24 }),
        (texts, cuts) => {
          const got: Array<string> = []
          const splitter = Lines.make({
            decode: Lines.text,
            maxLineBytes: Infinity,
            onLine: (text) => void got.push(text)
          })
          for (const chunk of cut(Buffer.from(texts.join("\n") + "\n"), cuts)) splitter.push(chunk)
          assert.deepStrictEqual(got, texts)
          assert.strictEqual(splitter.bufferedBytes, 0)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("a line past its bound is reported once, with what arrived of it, and skipped; a raised bound reads it on", () => {
    fc.assert(
      fc.property(stream, fc.nat({ max: 48 }), fc.nat({ max: 24 }), ({ cuts, finished, lines }, bound, raise) => {
        // As a listener's frames: past `bound`, a line is read on up to `bound + raise`, then skipped.
        const higher = bound + raise
        const bytes = streamOf(lines, finished)
        const got: Array<Buffer> = []
        const overflows: Array<{ readonly line: number; readonly held: Buffer; readonly bytes: number }> = []
        let begun = 0
        const splitter = Lines.make({
          decode: copy,
          maxLineBytes: bound,
          onLine: (line) => void got.push(line),
          onLineStart: () => void begun++,
          onOverflow: (held, bytes) => {
            overflows.push({ line: begun - 1, held: Buffer.concat(held), bytes })
            return bytes <= higher ? higher : undefined
          }
        })
        let read = 0
        for (const chunk of cut(bytes, cuts)) {
          splitter.push(chunk)
          read += chunk.length
          const tail = tailOf(bytes.subarray(0, read))
          assert.strictEqual(splitter.bufferedBytes, tail <= higher ? tail : 0)
        }
        const complete = finished ? lines : lines.slice(0, -1)
        assert.deepStrictEqual(
          got,
          complete.filter((line) => line.length <= higher)
        )
        // A line is reported as it passes `bound`, with what arrived of it, and again if it passes the raised bound.
        lines.forEach((line, i) => {
          const reports = overflows.filter((overflow) => overflow.line === i)
          for (const report of reports) {
            assert.isAtMost(report.bytes, line.length)
            assert.deepStrictEqual(report.held, line.subarray(0, report.bytes))
          }
          if (line.length <= bound) return assert.strictEqual(reports.length, 0)
          assert.isAbove(reports[0]!.bytes, bound)
          if (reports[0]!.bytes > higher || line.length <= higher) return assert.strictEqual(reports.length, 1)
          assert.strictEqual(reports.length, 2)
          assert.isAbove(reports[1]!.bytes, higher)
        })
      }),
      { numRuns: 500 }
    )
  })

  it("a sink takes a line as it arrives, unbounded, and is handed it whole if it was short enough to keep", () => {
    fc.assert(
      fc.property(stream, fc.nat({ max: 48 }), fc.nat({ max: 3 }), ({ cuts, lines }, keepBytes, every) => {
        const bytes = streamOf(lines, true)
        const got: Array<Buffer> = []
        const streamed: Array<{ readonly bytes: Buffer; readonly line: Buffer | undefined }> = []
        let begun = 0
        const splitter = Lines.make({
          decode: copy,
          maxLineBytes: 0,
          onLine: (line) => void got.push(line),
          onLineStart: () => {
            if (begun++ % (every + 1) !== 0) return undefined
            const parts: Array<Buffer> = []
            return {
              keepBytes,
              write: (chunk, from, to) => void parts.push(copy(chunk, from, to)),
              end: (line) => void streamed.push({ bytes: Buffer.concat(parts), line })
            }
          }
        })
        for (const chunk of cut(bytes, cuts)) {
          splitter.push(chunk)
          assert.isAtMost(splitter.bufferedBytes, keepBytes)
        }
        const sunk = lines.filter((_, i) => i % (every + 1) === 0)
        assert.deepStrictEqual(
          streamed,
          sunk.map((line) => ({ bytes: line, line: line.length <= keepBytes ? line : undefined }))
        )
        // With a bound of 0, every line not sunk is past it: only empty ones arrive.
        assert.deepStrictEqual(
          got,
          lines.filter((line, i) => i % (every + 1) !== 0 && line.length === 0)
        )
      }),
      { numRuns: 300 }
    )
  })

  it("a sink given at the overflow gets the rest of the line; nothing of it is held", () => {
    fc.assert(
      fc.property(stream, fc.nat({ max: 16 }), ({ cuts, lines }, bound) => {
        const bytes = streamOf(lines, true)
        const rebuilt: Array<Buffer> = []
        const splitter = Lines.make({
          decode: copy,
          maxLineBytes: bound,
          onLine: () => {},
          onOverflow: (held) => {
            const parts: Array<Buffer> = held.map((piece) => Buffer.from(piece))
            return {
              write: (chunk, from, to) => void parts.push(copy(chunk, from, to)),
              end: (line) => {
                assert.strictEqual(line, undefined)
                rebuilt.push(Buffer.concat(parts))
              }
            }
          }
        })
        for (const chunk of cut(bytes, cuts)) {
          splitter.push(chunk)
          assert.isAtMost(splitter.bufferedBytes, bound)
        }
        assert.deepStrictEqual(
          rebuilt,
          lines.filter((line) => line.length > bound)
        )
      }),
      { numRuns: 300 }
    )
  })

  it("a reader that stops gets the rest of the chunk back, and reading it later loses nothing", () => {
    fc.assert(
      fc.property(stream, fc.array(fc.boolean(), { minLength: 1 }), ({ cuts, finished, lines }, stops) => {
        const bytes = streamOf(lines, finished)
        const got: Array<Buffer> = []
        const splitter = Lines.make({
          decode: copy,
          maxLineBytes: Infinity,
          onLine: (line) => got.push(line) > 0 && stops[got.length % stops.length] !== true
        })
        for (const chunk of cut(bytes, cuts)) {
          for (let rest = splitter.push(chunk); rest !== undefined; rest = splitter.push(rest)) {
            assert.isAbove(rest.length, 0)
            assert.strictEqual(splitter.bufferedBytes, 0)
          }
        }
        assert.deepStrictEqual(got, finished ? lines : lines.slice(0, -1))
      }),
      { numRuns: 300 }
    )
  })

  it("a \\r before the newline is dropped when asked, and counted toward the bound either way", () => {
    const read = (dropCarriageReturn: boolean, maxLineBytes: number, chunks: ReadonlyArray<string>) => {
      const got: Array<string> = []
      const overflows: Array<number> = []
      const splitter = Lines.make({
        decode: Lines.text,
        maxLineBytes,
        dropCarriageReturn,
        onLine: (line) => void got.push(line),
        onOverflow: (_held, bytes) => void overflows.push(bytes)
      })
      for (const chunk of chunks) splitter.push(Buffer.from(chunk))
      return { got, overflows }
    }
    assert.deepStrictEqual(read(true, 8, ["a\r\n\r\nb\r", "\nc\r\r\n"]).got, ["a", "", "b", "c\r"])
    assert.deepStrictEqual(read(false, 8, ["a\r\n\r", "\n"]).got, ["a\r", "\r"])
    assert.deepStrictEqual(read(true, 2, ["ab\r\nab\n"]), { got: ["ab"], overflows: [3] })
  })

  it("clear lets go of the unfinished line and skips the rest of it", () => {
    const got: Array<string> = []
    const splitter = Lines.make({ decode: Lines.text, maxLineBytes: Infinity, onLine: (line) => void got.push(line) })
    splitter.push(Buffer.from("one\ntw"))
    assert.strictEqual(splitter.bufferedBytes, 2)
    splitter.clear()
    assert.strictEqual(splitter.bufferedBytes, 0)
    splitter.push(Buffer.from("o\nthree\n"))
    assert.deepStrictEqual(got, ["one", "three"])
  })
})
