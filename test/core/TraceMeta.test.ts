// C83: the W3C traceparent an owner writes into a request's _meta, from the span context the request carries.
import { assert, describe, it } from "@effect/vitest"
import * as TraceMeta from "../../packages/core/src/internal/owner/traceMeta.js"

describe("C83: the traceparent written", () => {
  const span = ["0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", true] as const

  it("is W3C version 00 with the sampled flag, added beside the caller's own _meta keys", () => {
    assert.deepStrictEqual(TraceMeta.withTraceContext({ name: "t", _meta: { progressToken: 1 } }, span), {
      name: "t",
      _meta: { progressToken: 1, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }
    })
    assert.strictEqual(TraceMeta.traceparentOf([span[0], span[1], false]), `00-${span[0]}-${span[1]}-00`)
  })

  it("leaves a caller's own traceparent, and sends none for ids that are not W3C ids", () => {
    const own = { name: "t", _meta: { traceparent: "00-11111111111111111111111111111111-2222222222222222-01" } }
    assert.strictEqual(TraceMeta.withTraceContext(own, span), own)
    const params = { name: "t" }
    assert.strictEqual(TraceMeta.withTraceContext(params, ["abc", "def", true]), params)
    assert.strictEqual(TraceMeta.withTraceContext(params, ["0".repeat(32), span[1], true]), params)
    assert.strictEqual(TraceMeta.withTraceContext(params, undefined), params)
  })
})
