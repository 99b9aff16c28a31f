// The streaming scanner behind `saveTo`, against JSON.stringify: for any result, any id, any order of the
// response's members and any way the line is cut into pieces, the bytes handed on are exactly the result's JSON,
// and the id, `error`, `isError` and the preview of the first text are what the line says.
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { decodeStringStart, ResponseScanner } from "../../packages/node/src/internal/transport/responseScanner.js"
import { previewBytes, previewUnits } from "../../packages/node/src/internal/transport/responseSave.js"

const member = fc.oneof(
  fc.constant<[string, unknown]>(["jsonrpc", "2.0"]),
  fc.constant<[string, unknown]>(["_meta", { note: 'a "quoted" } ] , value' }])
)

const result = fc.record(
  {
    content: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text"), text: fc.string({ unit: "binary", maxLength: 3000 }) }),
        fc.record({ type: fc.constant("image"), data: fc.base64String(), mimeType: fc.constant("image/png") })
      ),
      { maxLength: 3 }
    ),
    isError: fc.boolean(),
    structuredContent: fc.jsonValue({ maxDepth: 4 }),
    text: fc.string()
  },
  { requiredKeys: ["content"] }
)

/** Cuts `bytes` at the given points (sorted, deduplicated) and feeds the pieces one by one. */
const scan = (bytes: Buffer, cuts: ReadonlyArray<number>) => {
  const handed: Array<Buffer> = []
  const scanner = new ResponseScanner((piece) => handed.push(Buffer.from(piece)), previewBytes)
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  let from = 0
  for (const point of [...points, bytes.length]) {
    if (point <= from) continue
    // Each piece inside a larger buffer, as a stream's chunks are.
    const chunk = Buffer.concat([Buffer.from("junk"), bytes.subarray(from, point), Buffer.from("junk")])
    scanner.feed(chunk, 4, 4 + (point - from))
    from = point
  }
  scanner.end()
  return { scanner, handed: Buffer.concat(handed) }
}

describe("ResponseScanner", () => {
  it("hands on exactly the result's bytes and reads the id, isError and preview, however the line is cut", () =>
    fc.assert(
      fc.property(
        result,
        fc.oneof(fc.integer(), fc.string({ maxLength: 20 })),
        fc.array(member, { maxLength: 2 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (value, id, extra, order, cuts) => {
          const members: Array<[string, unknown]> = [["result", value], ...extra]
          members.splice(order % (members.length + 1), 0, ["id", id])
          const line = Buffer.from(JSON.stringify(Object.fromEntries(members)), "utf8")
          const { scanner, handed } = scan(line, cuts)
          assert.strictEqual(handed.toString("utf8"), JSON.stringify(value))
          assert.isTrue(scanner.resultComplete)
          assert.strictEqual(scanner.id, JSON.stringify(id))
          assert.isFalse(scanner.hasError)
          assert.strictEqual(scanner.isErrorText, value.isError === undefined ? undefined : String(value.isError))
          const first = value.content[0]
          if (first !== undefined && "text" in first) {
            const preview = decodeStringStart(scanner.textRaw!, previewUnits)
            assert.isTrue(first.text.startsWith(preview))
            // Cut at a whole character: at most one unit short of the limit (a surrogate pair is not split).
            assert.isAtLeast(preview.length, Math.min(first.text.length, previewUnits) - 1)
          }
        }
      ),
      { numRuns: 500 }
    ))

  it("notes an error answer and hands on nothing", () => {
    const line = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 7, error: { code: -32602, message: "bad" } }))
    const { scanner, handed } = scan(line, [3, 17])
    assert.isTrue(scanner.hasError)
    assert.strictEqual(scanner.id, "7")
    assert.strictEqual(handed.length, 0)
    assert.isFalse(scanner.resultComplete)
  })

  it("reads a 2026-07-28 resultType, so that an input_required round is never what saveTo writes", () =>
    fc.assert(
      fc.property(
        fc.constantFrom("complete", "input_required", "task_pending_unknown"),
        fc.array(fc.nat(), { maxLength: 8 }),
        (resultType, cuts) => {
          const round = { resultType, inputRequests: { q: { method: "elicitation/create", params: { note: "}" } } } }
          const line = Buffer.from(JSON.stringify({ result: round, jsonrpc: "2.0", id: 3 }), "utf8")
          const { scanner } = scan(line, cuts)
          assert.strictEqual(scanner.resultTypeText, JSON.stringify(resultType))
          assert.isTrue(scanner.resultComplete)
        }
      )
    ))

  it("leaves resultType unset for a result without one, and ignores one nested deeper", () => {
    const nested = { content: [{ type: "text", text: "x" }], structuredContent: { resultType: "input_required" } }
    const { scanner } = scan(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: nested })), [5])
    assert.isUndefined(scanner.resultTypeText)
  })
})
