// The data pipe of an owner process (linePort.ts): every data-plane message arrives as it was posted, whatever the
// chunks the pipe cuts it into, before and after either side is ready.
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Duplex, PassThrough } from "node:stream"
import * as LinePort from "../../packages/node/src/internal/wire/linePort.js"

/** Two ports joined by in-memory streams; `cut` splits what goes from `a` to `b` into chunks of that many bytes. */
const pair = (cut?: number) => {
  const aToB = new PassThrough()
  const bToA = new PassThrough()
  const toB =
    cut === undefined
      ? aToB
      : new PassThrough({
          transform(chunk: Buffer, _encoding, done) {
            for (let at = 0; at < chunk.length; at += cut) this.push(chunk.subarray(at, at + cut))
            done()
          }
        })
  if (toB !== aToB) toB.pipe(aToB)
  const a = LinePort.make()
  const b = LinePort.make()
  a.attach(Duplex.from({ readable: bToA, writable: toB }))
  b.attach(Duplex.from({ readable: aToB, writable: bToA }))
  return { a, b, end: () => (a.close(), b.close()) }
}

const received = (port: LinePort.LinePort, n: number): Promise<Array<unknown>> =>
  new Promise((resolve) => {
    const got: Array<unknown> = []
    port.on("message", (message) => {
      got.push(message)
      if (got.length === n) resolve(got)
    })
  })

// The shapes the owner and the host post (OwnerProtocol.ts), with strings of any code units.
const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })
const message = fc.oneof(
  fc.record({ _tag: fc.constant("Success"), requestId: text, result: text, envelope: fc.boolean() }),
  fc.record({ _tag: fc.constant("Request"), requestId: text, method: text, params: text, timeoutMs: fc.nat() }),
  fc.record({
    _tag: fc.constant("Progress"),
    requestId: text,
    progress: fc.record({ progress: fc.double({ noNaN: true, noDefaultInfinity: true }) })
  }),
  fc.record({ _tag: fc.constant("Spawned"), pid: fc.nat() })
)

describe("LinePort", () => {
  it("any message arrives as posted, however the pipe cuts it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 64 }),
        async (messages, cut) => {
          const { a, b, end } = pair(cut)
          const got = received(b, messages.length)
          for (const m of messages) a.postMessage(m)
          // -0 is the one number JSON does not keep; the protocol has no use for it.
          assert.deepStrictEqual(await got, JSON.parse(JSON.stringify(messages, (_k, v) => (Object.is(v, -0) ? 0 : v))))
          end()
        }
      ),
      { numRuns: 100 }
    )
  })

  it("a 4 MiB result arrives whole, as its own text, and newlines in a result are kept", async () => {
    const { a, b, end } = pair()
    const big = JSON.stringify({ result: { content: [{ type: "text", text: "x".repeat(4 * 1024 * 1024) }] } })
    const pretty = '{\n  "content": []\n}'
    const got = received(b, 2)
    a.postMessage({ _tag: "Success", requestId: "r1", result: big, envelope: true })
    a.postMessage({ _tag: "Success", requestId: "r2\t\n", result: pretty, envelope: false })
    const [first, second] = (await got) as Array<any>
    assert.strictEqual(first.result, big)
    assert.deepStrictEqual(second, { _tag: "Success", requestId: "r2\t\n", result: pretty, envelope: false })
    end()
  })

  it("what is posted before attach, and what arrives before anyone listens, waits", async () => {
    const a = LinePort.make()
    const b = LinePort.make()
    a.postMessage({ _tag: "Init", marker: "m" })
    const aToB = new PassThrough()
    const bToA = new PassThrough()
    b.attach(Duplex.from({ readable: aToB, writable: bToA }))
    a.attach(Duplex.from({ readable: bToA, writable: aToB }))
    a.postMessage({ _tag: "Spawned", pid: 1 })
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.deepStrictEqual(await received(b, 2), [
      { _tag: "Init", marker: "m" },
      { _tag: "Spawned", pid: 1 }
    ])
    a.close()
    b.close()
  })
})
