// C110–C112: the socket protocol's handshake, and its frames as docs/wire.md states them. `wire-script.json` is an
// exchange of a socket client (`makePromiseClient({ connect })`) with a real listener, recorded through a proxy
// (`MCP_WORKER_RECORD_WIRE=1 npx vitest run test/caller/socketWire.test.ts`); the conformance test replays the client's
// frames against a fresh host, frame by frame, and compares what the host answers, ids and timing-dependent fields
// aside. It fails when the wire changes.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as CallerWire from "../../packages/caller/src/internal/socket/connection.js"
import * as Socket from "../../packages/caller/src/internal/socket/index.js"
import * as Operations from "../../packages/core/src/Operations.js"
import * as Frames from "../../packages/node/src/internal/listen/frames.js"
import { makePromiseClient } from "../../packages/node/src/PromiseClient.js"
import { statefulConfig } from "../fixtures/servers.js"
import { eventually } from "../node/helpers.js"
import { listening, socketPath } from "../node/listenSandbox.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const scriptPath = path.join(here, "wire-script.json")

/** One frame of the recorded exchange: from the caller (`out`) or from the host (`in`). */
interface Step {
  readonly dir: "out" | "in"
  readonly frame: any
}

/** A raw connection: frames written as given, frames read one at a time. */
const rawConnection = (socket: string) =>
  Effect.acquireRelease(
    Effect.async<{ conn: net.Socket; next: (ms?: number) => Promise<any>; closed: Promise<void> }>((resume) => {
      const conn = net.createConnection(socket)
      const frames: Array<any> = []
      const waiting: Array<(frame: any) => void> = []
      let text = ""
      conn.on("data", (data) => {
        text += data.toString("utf8")
        const lines = text.split("\n")
        text = lines.pop()!
        for (const line of lines) {
          const frame = JSON.parse(line)
          const waiter = waiting.shift()
          if (waiter !== undefined) waiter(frame)
          else frames.push(frame)
        }
      })
      conn.on("error", () => {})
      const closed = new Promise<void>((resolve) => conn.once("close", () => resolve()))
      const next = (ms = 10_000) =>
        frames.length > 0
          ? Promise.resolve(frames.shift())
          : new Promise<any>((resolve) => {
              const timer = setTimeout(() => resolve({ _tag: "(nothing)" }), ms)
              waiting.push((frame) => {
                clearTimeout(timer)
                resolve(frame)
              })
            })
      conn.once("connect", () => resume(Effect.succeed({ conn, next, closed })))
    }),
    ({ conn }) => Effect.sync(() => conn.destroy())
  )

describe("C110: the handshake", () => {
  it.scopedLive("a peer whose first frame is not a Hello of a version the listener speaks is refused with why", () =>
    Effect.gen(function* () {
      const { path: socket } = yield* listening()
      const refusals: Array<[string, RegExp]> = [
        ['{"_tag":"Ping"}\n', /must be a Hello/],
        ['{"_tag":"Request","id":"0","tag":"ping","payload":{},"headers":[]}\n', /must be a Hello/],
        ["not json\n", /not JSON/],
        [Frames.hello(2), /speaks versions 1 of "mcp-worker", not 2/],
        [JSON.stringify({ _tag: "Hello", protocol: "other", version: 1 }) + "\n", /speaks protocol "mcp-worker"/],
        ["x".repeat(Frames.maxHelloBytes + 1), /at most 256 bytes/]
      ]
      for (const [first, reason] of refusals) {
        const raw = yield* rawConnection(socket)
        raw.conn.write(first)
        const answer = yield* Effect.promise(() => raw.next())
        assert.strictEqual(answer._tag, "Rejected", JSON.stringify(answer))
        assert.strictEqual(answer.protocol, "mcp-worker")
        assert.deepStrictEqual(answer.versions, [1])
        assert.match(answer.reason, reason)
        // The listener closes the connection after its refusal; a Ping sent after it is never answered.
        raw.conn.write('{"_tag":"Ping"}\n')
        yield* Effect.promise(() => raw.closed)
      }
    })
  )

  it.scopedLive("a good Hello is welcomed, and the protocol follows on the same connection", () =>
    Effect.gen(function* () {
      const { path: socket } = yield* listening()
      const raw = yield* rawConnection(socket)
      // The Hello and the first frame of the protocol in one write: the listener reads past the Hello.
      raw.conn.write(CallerWire.hello + CallerWire.ping)
      assert.deepStrictEqual(yield* Effect.promise(() => raw.next()), {
        _tag: "Welcome",
        protocol: "mcp-worker",
        version: 1
      })
      assert.deepStrictEqual(yield* Effect.promise(() => raw.next()), { _tag: "Pong" })
    })
  )

  it.scopedLive("the socket plane is told a refusal as HostUnavailable, not_sent, with the host's reason", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      // A listener of another version: it refuses every Hello, as a host that does not speak version 1 would.
      const server = net.createServer((conn) => {
        conn.once("data", () =>
          conn.end(
            JSON.stringify({
              _tag: "Rejected",
              protocol: "mcp-worker",
              versions: [2],
              reason: 'this listener speaks versions 2 of "mcp-worker", not 1'
            }) + "\n"
          )
        )
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(socket.path, resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const plane = Socket.make({ path: socket.path })
      const error = yield* Effect.promise(() =>
        plane.request({ workerId: "w", method: "ping", params: "{}", budgetMs: undefined }).then(
          () => undefined,
          (error: any) => error
        )
      )
      assert.strictEqual(error?._tag, "HostUnavailable")
      assert.strictEqual(error?.delivery, "not_sent")
      assert.match(error?.message, /refused the connection: this listener speaks versions 2/)
      yield* Effect.promise(plane.dispose)
    })
  )

  it("the socket plane's tags are the listener's operation table: every request by its MCP method (C111)", () => {
    // `startTask` is `tools/call` too: its caller names it (`Call.operation`), and `tools/call` alone is `callTool`.
    const table = Object.entries(Operations.requests).filter(([name]) => name !== "startTask")
    assert.deepStrictEqual(
      new Map(table.map(([name, operation]) => [operation.method, name])),
      new Map(Socket.requestTags)
    )
    assert.deepStrictEqual(
      [Operations.requests.callTool.method, Operations.requests.startTask.method],
      ["tools/call", "tools/call"]
    )
  })
})

describe("C114: a call names its operation on the socket", () => {
  it.scopedLive(
    "startTask goes as startTask, tools/call alone as callTool, and a name of another method not at all",
    () =>
      Effect.gen(function* () {
        const socket = socketPath()
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
        // A peer that speaks the wire: it welcomes the Hello, records each request's tag and answers it with `{}`.
        const tags: Array<string> = []
        const server = net.createServer((conn) => {
          let text = ""
          conn.on("data", (data) => {
            text += data.toString("utf8")
            const lines = text.split("\n")
            text = lines.pop()!
            for (const line of lines) {
              const frame = JSON.parse(line)
              if (frame._tag === "Hello")
                conn.write(JSON.stringify({ _tag: "Welcome", protocol: "mcp-worker", version: 1 }) + "\n")
              if (frame._tag === "Ping") conn.write('{"_tag":"Pong"}\n')
              if (frame._tag !== "Request") continue
              tags.push(frame.tag)
              conn.write(
                JSON.stringify({ _tag: "Exit", requestId: frame.id, exit: { _tag: "Success", value: {} } }) + "\n"
              )
            }
          })
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => new Promise<void>((resolve) => server.listen(socket.path, resolve))),
          () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
        )
        const plane = Socket.make({ path: socket.path })
        yield* Effect.addFinalizer(() => Effect.promise(plane.dispose))
        const params = JSON.stringify({ name: "t", arguments: {}, task: { ttl: 1000 } })
        const call = { workerId: "w", method: "tools/call", params, budgetMs: undefined }
        yield* Effect.promise(() => plane.request({ ...call, operation: "startTask" }))
        yield* Effect.promise(() => plane.request({ ...call, operation: "callTool" }))
        // Without a name, the method's one request: `task` in the params tells nothing.
        yield* Effect.promise(() => plane.request(call))
        const refused: any = yield* Effect.promise(() =>
          plane.request({ ...call, method: "resources/read", operation: "startTask" }).then(
            () => undefined,
            (error: unknown) => error
          )
        )
        assert.deepStrictEqual(tags, ["startTask", "callTool", "callTool"])
        assert.strictEqual(refused?._tag, "InvalidInput")
        assert.strictEqual(refused?.delivery, "not_sent")
        assert.match(refused?.message, /no request is startTask \(resources\/read\)/)
      })
  )
})

// Fields that differ from run to run: masked in both the recording and the replay.
const masked = new Set(["pid", "ownerPid", "threadId", "at", "deadline", "traceId", "spanId", "sampled"])

/** A frame with its ids numbered by first appearance and the run's own values masked. */
const normalizer = (grant: string) => {
  const ids = new Map<string, string>()
  const idOf = (id: string) => {
    if (!ids.has(id)) ids.set(id, `#${ids.size + 1}`)
    return ids.get(id)!
  }
  const walk = (value: unknown, key?: string): unknown => {
    // A worker's request ids are random (`req_…`): what the wire fixes is where they appear.
    if (typeof value === "string") return value === grant ? "$GRANT" : value.startsWith("req_") ? "$REQ" : value
    if (Array.isArray(value)) {
      if (key === "headers") return []
      return value.map((item) => walk(item))
    }
    if (value === null || typeof value !== "object") return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (masked.has(k)) out[k] = v === null || v === undefined ? v : "$"
      else if ((k === "id" || k === "requestId") && typeof v === "string" && /^\d+$/.test(v)) out[k] = idOf(v)
      else out[k] = walk(v, k)
    }
    return out
  }
  return walk
}

/** What the recording is: frames between the client and the host, without the pings of timing. */
const kept = (frame: any) => frame._tag !== "Ping" && frame._tag !== "Pong"

/**
 * A stream's Chunk/Ack pairs joined into one: the host sends what it holds and waits for that Chunk's Ack before the
 * next (docs/wire.md), so how values fall into Chunks depends on when the Ack came; the order of the values and an Ack
 * for every Chunk do not.
 */
const joinedChunks = (steps: ReadonlyArray<Step>): Array<Step> => {
  const joined: Array<Step> = []
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    if (step.dir !== "in" || step.frame._tag !== "Chunk") {
      joined.push(step)
      continue
    }
    const ack = steps[i + 1]
    assert.deepStrictEqual(ack, { dir: "out", frame: { _tag: "Ack", requestId: step.frame.requestId } })
    const last = joined.at(-2)
    if (last?.frame._tag === "Chunk" && last.frame.requestId === step.frame.requestId) {
      joined[joined.length - 2] = {
        ...last,
        frame: { ...last.frame, values: [...last.frame.values, ...step.frame.values] }
      }
    } else {
      joined.push(step, ack!)
    }
    i++
  }
  return joined
}

/** The calls of the recording, made by a client with the Promise client's shape. */
interface Caller {
  readonly call: (
    id: string,
    tool: string,
    args: object,
    options?: { onProgress?: () => void; signal?: AbortSignal; timeout?: number }
  ) => Promise<unknown>
  readonly status: (id: string) => Promise<unknown>
  readonly dispose: () => Promise<void>
}

/** The recorded exchange as `caller` makes it through a proxy that taps every frame, normalized. */
const exchange = (connect: (path: string) => Caller) =>
  Effect.gen(function* () {
    const { path: socket, workers, grants } = yield* listening()
    const id = yield* workers.open(statefulConfig())
    const grant = yield* grants.grant(id)
    const proxy = socketPath()
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(proxy.dir, { recursive: true, force: true })))
    const steps: Array<Step> = []
    const tap = (dir: Step["dir"]) => {
      let text = ""
      return (data: Buffer) => {
        text += data.toString("utf8")
        const lines = text.split("\n")
        text = lines.pop()!
        for (const line of lines) steps.push({ dir, frame: JSON.parse(line) })
      }
    }
    const server = net.createServer((conn) => {
      const upstream = net.createConnection(socket)
      conn.on("data", tap("out"))
      upstream.on("data", tap("in"))
      conn.pipe(upstream)
      upstream.pipe(conn)
      conn.on("close", () => upstream.destroy())
      upstream.on("close", () => conn.destroy())
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((resolve) => server.listen(proxy.path, resolve))),
      () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
    )
    const busy = () => Effect.runPromise(workers.status(id)).then((status) => status.busy)
    const client = connect(proxy.path)
    yield* Effect.promise(async () => {
      await client.call(grant, "inc", {})
      await client.call(grant, "progress", { steps: 2 }, { onProgress: () => {} })
      const sleeping = client.call(grant, "sleep", { ms: 400 })
      await client.call(grant, "inc", {}).catch(() => undefined)
      await sleeping
      const controller = new AbortController()
      const aborted = client.call(grant, "sleep", { ms: 10_000 }, { signal: controller.signal }).catch(() => {})
      await eventually(busy, 10_000)
      controller.abort()
      await aborted
      await eventually(async () => !(await busy()), 10_000)
      await client.call(grant, "sleep", { ms: 10_000 }, { timeout: 200 }).catch(() => undefined)
      await eventually(async () => !(await busy()), 10_000)
      await client.status(grant)
      await client.call("mcpg_" + "A".repeat(44), "inc", {}).catch(() => undefined)
      await client.dispose()
    })
    const normal = normalizer(grant)
    return steps.filter((step) => kept(step.frame)).map((step) => ({ dir: step.dir, frame: normal(step.frame) }))
  })

/** The Effect client: what the recording is made with. */
const effectClient = (path: string): Caller => {
  const client = makePromiseClient({ connect: path })
  return {
    call: (id, tool, args, options) => client.callTool(id, tool, args as never, options as never),
    status: (id) => client.status(id),
    dispose: () => client.dispose()
  }
}

/** The socket plane of @mcp-worker/caller. */
const planeClient = (path: string): Caller => {
  const plane = Socket.make({ path })
  return {
    call: (id, tool, args, options) =>
      plane.request({
        workerId: id,
        method: "tools/call",
        params: JSON.stringify({ name: tool, arguments: args }),
        budgetMs: options?.timeout,
        onProgress: options?.onProgress,
        signal: options?.signal
      }),
    status: (id) => plane.status(id),
    dispose: plane.dispose
  }
}

const record = Effect.gen(function* () {
  const script = yield* exchange(effectClient)
  fs.writeFileSync(scriptPath, JSON.stringify(script, null, 2) + "\n")
})

describe("C112: the wire as docs/wire.md states it", () => {
  it.scopedLive.runIf(process.env.MCP_WORKER_RECORD_WIRE === "1")("records wire-script.json", () => record, 60_000)

  it.scopedLive(
    "the socket plane speaks the recorded exchange: its frames and the host's answers are the Effect client's",
    () =>
      Effect.gen(function* () {
        const script = JSON.parse(fs.readFileSync(scriptPath, "utf8")) as ReadonlyArray<Step>
        const spoken = yield* exchange(planeClient)
        assert.deepStrictEqual(joinedChunks(spoken), joinedChunks(script))
      }),
    60_000
  )

  it.scopedLive(
    "the recorded exchange replayed against a real listener: the host answers frame for frame",
    () =>
      Effect.gen(function* () {
        const script = JSON.parse(fs.readFileSync(scriptPath, "utf8")) as ReadonlyArray<Step>
        const { path: socket, workers, grants } = yield* listening()
        const id = yield* workers.open(statefulConfig())
        const grant = yield* grants.grant(id)
        const normal = normalizer(grant)
        const raw = yield* rawConnection(socket)
        const unmask = (value: unknown): unknown => {
          if (value === "$GRANT") return grant
          if (Array.isArray(value)) return value.map(unmask)
          if (value === null || typeof value !== "object") return value
          return Object.fromEntries(
            Object.entries(value).flatMap(([k, v]) =>
              // A recorded deadline was a budget from the moment of sending: 200 ms, as the recording's timeout.
              k === "deadline" ? [[k, Date.now() + 200]] : masked.has(k) ? [] : [[k, unmask(v)]]
            )
          )
        }
        const ids = new Map<string, string>()
        // Requests written and not yet answered: a request written with none is written on an idle worker, as recorded.
        const outstanding = new Set<string>()
        const idle = () => Effect.runPromise(workers.status(id)).then((status) => !status.busy)
        for (const [index, step] of joinedChunks(script).entries()) {
          if (step.dir === "out") {
            const frame = unmask(step.frame) as any
            // The script's ids are numbered by appearance; any decimal id the client picks will do.
            for (const key of ["id", "requestId"]) {
              if (typeof frame[key] === "string" && frame[key].startsWith("#")) {
                if (!ids.has(frame[key])) ids.set(frame[key], String(1000 + ids.size))
                frame[key] = ids.get(frame[key])
              }
            }
            if (frame._tag === "Request" && outstanding.size === 0) {
              assert.isTrue(
                yield* Effect.promise(() => eventually(idle, 10_000)),
                `the worker is idle before frame ${index}`
              )
            }
            if (frame._tag === "Request") outstanding.add(frame.id)
            if (frame._tag === "Interrupt") outstanding.delete(frame.requestId)
            normal(frame)
            raw.conn.write(JSON.stringify(frame) + "\n")
            continue
          }
          const next = () =>
            Effect.promise(async () => {
              let frame = await raw.next()
              while (frame._tag === "Pong") frame = await raw.next()
              return frame
            })
          let got = yield* next()
          // A stream's values, in as many Chunks as the host made of them, each acked before the next comes.
          if (step.frame._tag === "Chunk" && got._tag === "Chunk") {
            const values = [...got.values]
            while (values.length < step.frame.values.length) {
              raw.conn.write(JSON.stringify({ _tag: "Ack", requestId: got.requestId }) + "\n")
              const more = yield* next()
              assert.strictEqual(more._tag, "Chunk", `frame ${index} of wire-script.json`)
              values.push(...more.values)
            }
            got = { ...got, values }
          }
          if (got._tag === "Exit") outstanding.delete(got.requestId)
          assert.deepStrictEqual(normal(got), step.frame, `frame ${index} of wire-script.json`)
        }
      }),
    60_000
  )
})
