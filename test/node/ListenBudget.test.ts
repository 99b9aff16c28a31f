// The mechanisms of a listener's bounds, each driven exactly: the grantless frame bound (C47), the budget that closes
// the peers past their share (C63), the flow that stops reading a peer with too much unanswered (C64), and a refused
// peer's rest (C86). Peers are real Unix-socket connections; pausing one is its socket's own `pause`.
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as net from "node:net"
import * as Frames from "../../packages/node/src/internal/listen/frames.js"
import * as Grants from "../../packages/node/src/internal/listen/grants.js"
import { socketPath } from "./listenSandbox.js"

/** `count` connected socket pairs on a private path: the server's end of each, as a listener holds it. */
const pairs = async (count: number) => {
  const socket = socketPath()
  const accepted: Array<net.Socket> = []
  const server = net.createServer((conn) => accepted.push(conn))
  await new Promise<void>((resolve) => server.listen(socket.path, resolve))
  const clients = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const client = net.createConnection(socket.path, () => resolve(client))
        })
    )
  )
  while (accepted.length < count) await new Promise((resolve) => setImmediate(resolve))
  const close = async () => {
    for (const conn of [...clients, ...accepted]) conn.destroy()
    await new Promise((resolve) => server.close(resolve))
    fs.rmSync(socket.dir, { recursive: true, force: true })
  }
  return { accepted, close }
}

const peerOf = (budget: Frames.Budget, conn: net.Socket) =>
  Frames.join(budget, {
    pause: () => conn.pause(),
    resume: () => conn.resume(),
    close: () => conn.destroy(),
    unread: (bytes) => conn.unshift(bytes)
  })

/** A listener's decoder and encoder for one connection, fed as the socket feeds it (the peer set around each call). */
const parser = (budget: Frames.Budget, peer: Frames.Peer, admits: (head: string) => boolean = () => false) => {
  const frames = Frames.make(1024 * 1024, { grantlessBytes: Frames.grantlessFrameBytes, admits, budget })
  const made = frames.unsafeMake()
  return {
    decode: (data: string | Uint8Array) => {
      budget.reading = peer
      try {
        return made.decode(data)
      } finally {
        budget.reading = undefined
      }
    },
    encode: made.encode
  }
}

const request = (n: number, id = "x") =>
  JSON.stringify({ _tag: "Request", id: String(n), tag: "status", payload: { id }, headers: [] }) + "\n"

describe("listener bounds, mechanisms", () => {
  it("C47: a frame past 4 KiB is read on only if its head shows a valid grant; a revoked one no longer does", async () => {
    const grants = Grants.make()
    const grant = Grants.issue(grants, "mcpw_a", undefined, Date.now())
    assert.isTrue(grant._tag === "Right")
    const valid = grant._tag === "Right" ? grant.right : ""
    const budget = Frames.makeBudget(64 * 1024 * 1024)
    const { accepted, close } = await pairs(3)
    const admits = (head: string) => Grants.shownIn(grants, head, Date.now())
    const head = (id: string) => `{"_tag":"Request","id":"1","tag":"status","payload":{"id":"${id}","pad":"`
    const pad = "y".repeat(Frames.grantlessFrameBytes)
    // No grant: refused once the frame passes the bound, whatever the split.
    const none = parser(budget, peerOf(budget, accepted[0]!), admits)
    assert.deepStrictEqual(none.decode(head("mcpg_forged") + pad.slice(0, 3000)), [])
    assert.throws(() => none.decode(pad.slice(3000)), /shows no valid grant/)
    // A grant in the head: the same frame is read whole.
    const granted = parser(budget, peerOf(budget, accepted[1]!), admits)
    assert.deepStrictEqual(granted.decode(head(valid) + pad.repeat(8)), [])
    assert.strictEqual(granted.decode('"}}\n').length, 1)
    Grants.revoke(grants, valid)
    const revoked = parser(budget, peerOf(budget, accepted[2]!), admits)
    assert.throws(() => revoked.decode(head(valid) + pad), /shows no valid grant/)
    // A small frame needs no grant: it is read (and answered UnknownWorker), not closed.
    assert.strictEqual(parser(budget, peerOf(budget, accepted[2]!), admits).decode(request(2)).length, 1)
    await close()
  })

  it("C63: over the budget, the peers holding the most are closed, one within its share never", async () => {
    const budget = Frames.makeBudget(1000)
    const { accepted, close } = await pairs(3)
    const peers = accepted.map((conn) => peerOf(budget, conn))
    assert.isTrue(Frames.hold(budget, peers[0]!, 600))
    assert.isTrue(Frames.hold(budget, peers[1]!, 300))
    // 600 + 300 + 200 > 1000: the one holding 600 (past its share of 333) goes, the one that grew stays.
    assert.isTrue(Frames.hold(budget, peers[2]!, 200))
    assert.deepStrictEqual(
      peers.map((peer) => peer.state),
      ["closed", "reading", "reading"]
    )
    assert.isTrue(accepted[0]!.destroyed)
    assert.strictEqual(budget.used, 500)
    // The growing one itself, once it holds the most past the budget: `hold` says so, the decoder throws.
    assert.isFalse(Frames.hold(budget, peers[2]!, 800))
    assert.strictEqual(budget.used, 300)
    // Answers count as well: queued bytes are released when written.
    Frames.queue(budget, peers[1]!, 400)
    assert.strictEqual(budget.used, 700)
    Frames.queue(budget, peers[1]!, -400)
    assert.strictEqual(budget.used, 300)
    Frames.leave(budget, peers[1]!)
    assert.strictEqual(budget.used, 0)
    await close()
  })

  it("C64: a peer is read no further with 64 calls unanswered or 1 MiB of answers unwritten, and again after", async () => {
    const budget = Frames.makeBudget(64 * 1024 * 1024)
    const { accepted, close } = await pairs(1)
    const conn = accepted[0]!
    const peer = peerOf(budget, conn)
    const frames = parser(budget, peer)
    conn.resume()
    let all = ""
    for (let n = 0; n < Frames.maxCallsPerPeer; n++) all += request(n)
    // All but one request in one chunk and the last apart: reading stops exactly at the bound.
    const last = all.lastIndexOf("{")
    assert.strictEqual(frames.decode(all.slice(0, last)).length, Frames.maxCallsPerPeer - 1)
    assert.isFalse(conn.isPaused())
    frames.decode(all.slice(last))
    assert.isTrue(conn.isPaused())
    assert.strictEqual(peer.state, "paused")
    // One answer (an Exit) and it is read again.
    frames.encode({ _tag: "Exit", requestId: "0", exit: { _tag: "Success", value: null } })
    assert.isFalse(conn.isPaused())
    // Answers it leaves unread: paused past 1 MiB queued, read again once written.
    Frames.queue(budget, peer, Frames.maxQueuedPerPeer + 1)
    assert.isTrue(conn.isPaused())
    Frames.queue(budget, peer, -(Frames.maxQueuedPerPeer + 1))
    assert.isFalse(conn.isPaused())
    await close()
  })

  it("C64: a chunk with more requests than the bound is read up to it; the rest goes back to the socket", async () => {
    const budget = Frames.makeBudget(64 * 1024 * 1024)
    const { accepted, close } = await pairs(1)
    const conn = accepted[0]!
    const peer = peerOf(budget, conn)
    let all = ""
    for (let n = 0; n < Frames.maxCallsPerPeer + 10; n++) all += request(n)
    assert.strictEqual(parser(budget, peer).decode(all).length, Frames.maxCallsPerPeer)
    assert.isTrue(conn.isPaused())
    assert.strictEqual(conn.readableLength, Buffer.byteLength(all.split("\n").slice(Frames.maxCallsPerPeer).join("\n")))
    await close()
  })

  it("C86: a peer rests: read no further until its whole rest has passed, then read again; C64 outlasts a rest", async () => {
    const budget = Frames.makeBudget(64 * 1024 * 1024)
    const { accepted, close } = await pairs(2)
    const [conn, full] = [accepted[0]!, accepted[1]!]
    const peer = peerOf(budget, conn)
    const started = performance.now()
    Frames.rest(peer, Frames.restAfterRefusalMs)
    assert.isTrue(conn.isPaused())
    // A second refusal within the rest does not lengthen it.
    Frames.rest(peer, 10 * Frames.restAfterRefusalMs)
    while (conn.isPaused()) await new Promise((resolve) => setTimeout(resolve, 1))
    const rested = performance.now() - started
    assert.isAtLeast(rested, Frames.restAfterRefusalMs)
    assert.strictEqual(peer.state, "reading")
    // A peer with too many calls unanswered stays unread when its rest ends.
    const flooding = peerOf(budget, full)
    Frames.call(flooding, Frames.maxCallsPerPeer)
    Frames.rest(flooding, 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.isTrue(full.isPaused())
    Frames.call(flooding, -1)
    assert.isFalse(full.isPaused())
    await close()
  })
})
