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

describe("C84: the tracestate and baggage written beside it", () => {
  const ids = ["0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", true] as const
  const traceparent = `00-${ids[0]}-${ids[1]}-01`

  it("both travel when the trace carries them; an empty one is none", () => {
    const trace = [...ids, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7", "userId=alice,isProduction=false;p=1"] as const
    assert.deepStrictEqual(TraceMeta.withTraceContext({ name: "t" }, trace)._meta, {
      traceparent,
      tracestate: trace[3],
      baggage: trace[4]
    })
    assert.deepStrictEqual(TraceMeta.withTraceContext({ name: "t" }, [...ids, "", "k=v"])._meta, {
      traceparent,
      baggage: "k=v"
    })
    assert.deepStrictEqual(TraceMeta.withTraceContext({ name: "t" }, [...ids, "a@b=1"])._meta, {
      traceparent,
      tracestate: "a@b=1"
    })
  })

  it("each key the caller's _meta sets is theirs; their traceparent keeps this trace's tracestate out", () => {
    const trace = [...ids, "rojo=1", "k=v"] as const
    assert.deepStrictEqual(
      TraceMeta.withTraceContext({ _meta: { baggage: "mine=1", progressToken: 2 } }, trace)._meta,
      { baggage: "mine=1", progressToken: 2, traceparent, tracestate: "rojo=1" }
    )
    assert.deepStrictEqual(TraceMeta.withTraceContext({ _meta: { tracestate: "own=1" } }, trace)._meta, {
      tracestate: "own=1",
      traceparent,
      baggage: "k=v"
    })
    const theirs = { _meta: { traceparent: `00-${"1".repeat(32)}-${"2".repeat(16)}-01` } }
    assert.deepStrictEqual(TraceMeta.withTraceContext(theirs, trace)._meta, { ...theirs._meta, baggage: "k=v" })
    const all = { _meta: { ...theirs._meta, baggage: "mine=1" } }
    assert.strictEqual(TraceMeta.withTraceContext(all, trace), all)
  })

  it("a value outside W3C syntax or its bounds sends nothing of it", () => {
    const sent = (tracestate: string, baggage: string) => {
      const meta = TraceMeta.withTraceContext({}, [...ids, tracestate, baggage])._meta as Record<string, unknown>
      return [meta.tracestate ?? null, meta.baggage ?? null]
    }
    const member = (i: number) => `k${i}=v`
    for (const bad of ["Upper=1", "a=b=c", "a=1,a=2", "a= ", "=1", `k=${"v".repeat(257)}`, "a=1\u00e9"]) {
      assert.deepStrictEqual(sent(bad, ""), [null, null], bad)
    }
    assert.deepStrictEqual(sent(Array.from({ length: 33 }, (_, i) => member(i)).join(","), ""), [null, null])
    assert.deepStrictEqual(sent(`a=${"v".repeat(255)},b=${"v".repeat(255)}`, ""), [null, null])
    const thirtyTwo = Array.from({ length: 32 }, (_, i) => member(i)).join(" , ")
    assert.deepStrictEqual(sent(thirtyTwo, ""), [thirtyTwo, null])
    for (const bad of ["no-equals", "k=v v", 'k="v"', "k=v,", "k=\u00e9", "k=v;", `k=${"v".repeat(4095)}`]) {
      assert.deepStrictEqual(sent("", bad), [null, null], bad)
    }
    assert.deepStrictEqual(sent("", Array.from({ length: 181 }, (_, i) => member(i)).join(",")), [null, null])
    const spaced = "k = v%20w ; meta ; p=1 , other=2"
    assert.deepStrictEqual(sent("", spaced), [null, spaced])
  })
})
