// The result policy's pure parts (C60): the policy checks and their paths, the spilled answer as it travels and as a
// caller's surface reads it, and the name of a spilled file.
import * as ResultFile from "@mcp-worker/core/ResultFile"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"

const summary: ResultFile.SavedResult = {
  path: "/tmp/spill/get_page-req_AAAAAAAAAAAAAAAA.json",
  bytes: 123_456,
  sha256: "ab".repeat(32),
  isError: false,
  preview: "It starts"
}

const accept: ResultFile.Check = () => undefined

describe("ResultFile (C60)", () => {
  it("a spill's wire form is read back into a SpilledResult in the caller's thread, and only there", () => {
    const wire = ResultFile.encodeSpilled(summary, 65_536)
    // It crosses threads as JSON text or a structured clone: a JSON array, which no MCP result is.
    const travelled = JSON.parse(JSON.stringify(wire))
    assert.isTrue(Array.isArray(travelled))
    const answer = ResultFile.answerOf(travelled)
    assert.isTrue(ResultFile.isSpilled(answer))
    assert.deepStrictEqual(
      { ...(answer as object) },
      {
        spilled: true,
        ...summary,
        limit: 65_536,
        content: [
          {
            type: "text",
            text:
              "The result (123456 bytes) passed maxResultBytes (65536 bytes) and was saved to " +
              `${summary.path} (sha256 ${"ab".repeat(32)}).`
          }
        ]
      }
    )
    // Printed or copied, it is plain data again: a server's result shaped like it is not one.
    assert.isFalse(ResultFile.isSpilled(JSON.parse(JSON.stringify(answer))))
    assert.isFalse(ResultFile.isSpilled(structuredClone(answer)))
    assert.isFalse(ResultFile.isSpilled(ResultFile.answerOf({ ...summary, spilled: true, content: [] })))
    // Handed on to another process, and read there.
    assert.isTrue(ResultFile.isSpilled(ResultFile.answerOf(JSON.parse(JSON.stringify(ResultFile.wireOf(answer))))))
    const plain = { content: [{ type: "text", text: "hi" }] }
    assert.strictEqual(ResultFile.answerOf(plain), plain)
    assert.strictEqual(ResultFile.wireOf(plain), plain)
  })

  it("policies: fail, a spill, or nothing; everything else refused with its path", () => {
    assert.deepStrictEqual(ResultFile.callPolicyOf(undefined, accept), Either.right(undefined))
    assert.deepStrictEqual(ResultFile.callPolicyOf({}, accept), Either.right(undefined))
    assert.deepStrictEqual(ResultFile.callPolicyOf({ onTooLarge: "fail" }, accept), Either.right(false))
    assert.deepStrictEqual(ResultFile.callPolicyOf({ onTooLarge: { spill: "/d" } }, accept), Either.right("/d"))
    // On open, "fail" is the default: no spill directory.
    assert.deepStrictEqual(ResultFile.openPolicyOf({ onTooLarge: "fail" }, accept), Either.right(undefined))
    assert.deepStrictEqual(ResultFile.openPolicyOf({ onTooLarge: { spill: "/d" } }, accept), Either.right("/d"))
    const refused = (onTooLarge: unknown, ...checks: [ResultFile.Check | undefined] | []) => {
      const check = checks.length === 0 ? accept : checks[0]
      const call = ResultFile.callPolicyOf({ onTooLarge }, check)
      const open = ResultFile.openPolicyOf({ onTooLarge }, check)
      assert.isTrue(Either.isLeft(call) && Either.isLeft(open), JSON.stringify(onTooLarge))
      if (Either.isRight(call) || Either.isRight(open)) return []
      assert.deepStrictEqual([call.left.where, open.left.where], ["arguments", "config"])
      assert.strictEqual(call.left.delivery, "not_sent")
      assert.strictEqual(call.left.path, open.left.path)
      return [call.left.path, call.left.message]
    }
    assert.deepStrictEqual(refused("spill"), [
      "options.onTooLarge",
      'onTooLarge must be "fail" or { spill: directory }'
    ])
    assert.deepStrictEqual(refused(null)[0], "options.onTooLarge")
    assert.deepStrictEqual(refused(["/d"])[0], "options.onTooLarge")
    assert.deepStrictEqual(refused({ spill: 1 }), ["options.onTooLarge.spill", "spill must be a directory path"])
    assert.deepStrictEqual(refused({ spill: "/d", to: "/e" }), ["options.onTooLarge.to", "onTooLarge has only spill"])
    assert.deepStrictEqual(refused({ spill: "/d" }, undefined), [
      "options.onTooLarge.spill",
      "spill is not available here"
    ])
    assert.deepStrictEqual(
      refused({ spill: "/d" }, (dir) => `no ${dir}`),
      ["options.onTooLarge.spill", "no /d"]
    )
    // A surface that cannot spill still takes "fail".
    assert.deepStrictEqual(ResultFile.callPolicyOf({ onTooLarge: "fail" }, undefined), Either.right(false))
  })

  it.prop(
    "a spilled file's name is the tool's, made safe, then the request id: never a path, never hidden",
    [fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom("..", ".", "../../etc/passwd", "a/b", "", "\0x"))],
    ([tool]) => {
      const requestId = WorkerId.makeRequestId()
      const name = ResultFile.fileName(tool, requestId)
      assert.match(name, /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}-req_[A-Za-z0-9_-]{16}\.json$/)
      assert.isTrue(name.endsWith(`-${requestId}.json`))
      if (/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/.test(tool)) assert.strictEqual(name, `${tool}-${requestId}.json`)
    }
  )
})
