import * as WorkerId from "@mcp-worker/core/WorkerId"
import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as fc from "fast-check"

const base64url = /^[A-Za-z0-9_-]*$/

describe("WorkerId (C1)", () => {
  it("make: mcpw_ + 22 base64url characters carrying 128 random bits", () => {
    const id = WorkerId.make()
    assert.strictEqual(id.length, 27)
    assert.isTrue(id.startsWith("mcpw_"))
    assert.match(id.slice(5), base64url)
    // 128 bits leave the 4 low bits of the last digit zero.
    assert.include("AQgw", id[26])
  })

  it("make: ids are distinct and every base64url digit shows up (the bits are random)", () => {
    const ids = new Set<string>()
    const digits = new Set<string>()
    for (let i = 0; i < 10_000; i++) {
      const id = WorkerId.make()
      ids.add(id)
      for (const c of id.slice(5, 26)) digits.add(c)
    }
    assert.strictEqual(ids.size, 10_000)
    assert.strictEqual(digits.size, 64)
  })

  it("parse accepts exactly what make produces", () => {
    for (let i = 0; i < 1000; i++) {
      const id = WorkerId.make()
      assert.deepStrictEqual(WorkerId.parse(id), Option.some(id))
      assert.isTrue(WorkerId.isWorkerId(id))
    }
  })

  it("parse rejects everything else", () => {
    const id = WorkerId.make()
    const rejected: ReadonlyArray<unknown> = [
      undefined,
      null,
      42,
      {},
      [id],
      { toString: () => id },
      "",
      "mcpw_",
      id.slice(0, -1),
      id + "A",
      " " + id,
      id + "\n",
      id.replace("mcpw_", "MCPW_"),
      "mcpx_" + id.slice(5),
      "mcpw-" + id.slice(5),
      "mcpw_" + "A".repeat(21) + "B", // not a canonical 128-bit encoding
      "mcpw_" + "+".repeat(21) + "A",
      "mcpw_" + "/".repeat(21) + "A",
      "mcpw_" + "A".repeat(20) + "==",
      "req_" + "A".repeat(16)
    ]
    for (const input of rejected) {
      assert.isTrue(Option.isNone(WorkerId.parse(input)), `should reject ${String(input)}`)
      assert.isFalse(WorkerId.isWorkerId(input))
    }
  })

  it.prop(
    "parse never accepts a string that is not in the exact form",
    [fc.string({ maxLength: 40 })],
    ([input]) => {
      const accepted = Option.isSome(WorkerId.parse(input))
      assert.strictEqual(accepted, /^mcpw_[A-Za-z0-9_-]{21}[AQgw]$/.test(input))
    },
    { fastCheck: { numRuns: 2000 } }
  )
})

describe("RequestId (C12)", () => {
  it("makeRequestId: req_ + 16 base64url characters (96 random bits)", () => {
    const id = WorkerId.makeRequestId()
    assert.strictEqual(id.length, 20)
    assert.match(id, /^req_[A-Za-z0-9_-]{16}$/)
  })

  it("request ids are globally distinct", () => {
    const ids = new Set<string>()
    for (let i = 0; i < 10_000; i++) ids.add(WorkerId.makeRequestId())
    assert.strictEqual(ids.size, 10_000)
  })

  it("parseRequestId accepts exactly what makeRequestId produces", () => {
    const id = WorkerId.makeRequestId()
    assert.deepStrictEqual(WorkerId.parseRequestId(id), Option.some(id))
    assert.isTrue(WorkerId.isRequestId(id))
    for (const input of [
      undefined,
      7,
      "",
      id.slice(0, -1),
      id + "A",
      id.replace("req_", "rq_"),
      "req_" + "=".repeat(16),
      WorkerId.make()
    ]) {
      assert.isTrue(Option.isNone(WorkerId.parseRequestId(input)))
      assert.isFalse(WorkerId.isRequestId(input))
    }
  })
})
