// C119: what a grant holder reads of a worker is a declared projection of the host's record. A socket peer holding a
// grant calls every operation it has while the host and the peer take turns holding the worker, and every field it
// receives is listed here: no pid, thread id, path, runner, failure's words or another caller's request id.
import { assert, describe, it } from "@effect/vitest"
import * as McpWorkerError from "@mcp-worker/core/McpWorkerError"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { statefulConfig } from "../fixtures/servers.js"
import { socketPath } from "./listenSandbox.js"

/** Every field path of a value, objects walked, arrays by their items. */
const fieldsOf = (value: unknown, prefix = ""): Array<string> => {
  if (Array.isArray(value)) return [...new Set(value.flatMap((item) => fieldsOf(item, `${prefix}[]`)))].sort()
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value)
    .flatMap(([key, item]) => {
      const path = prefix === "" ? key : `${prefix}.${key}`
      return [path, ...fieldsOf(item, path)]
    })
    .sort()
}

/** An error as it crossed the socket: its encoded form, every field of it. */
const errorOf = <A, E extends McpWorkerError.McpWorkerError>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error): Record<string, unknown> =>
    Schema.encodeSync(McpWorkerError.McpWorkerError)(error)
  )

const statusFields = [
  "busy",
  "cleanup",
  "era",
  "lastFailure",
  "notifications",
  "notifications.dropped",
  "notifications.listChanged",
  "notifications.listChanged.prompts",
  "notifications.listChanged.resources",
  "notifications.listChanged.tools",
  "notifications.received",
  "ownerPid",
  "pid",
  "protocolVersion",
  "requestId",
  "server",
  "server.name",
  "server.version",
  "state",
  "threadId",
  "workerId"
]

describe("C119: a grant holder reads a declared projection of the host's record", () => {
  it.scopedLive("every field it receives on every operation, and none of the host's internals", () =>
    Effect.gen(function* () {
      const socket = socketPath()
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(socket.dir, { recursive: true, force: true })))
      const host = yield* Layer.build(NodeMcpWorkers.layerListen({ path: socket.path }))
      const workers = Context.get(host, McpWorkers)
      const id = yield* workers.open(statefulConfig())
      const grant = yield* Context.get(host, McpGrants.McpGrants).grant(id, { tools: ["echo", "sleep", "notify"] })
      const peer = Context.get(yield* Layer.build(NodeMcpWorkers.layerConnect({ path: socket.path })), McpWorkers)
      const untilBusy = <A extends { readonly busy: boolean }, E>(read: Effect.Effect<A, E>) =>
        read.pipe(
          Effect.repeat({ schedule: Schedule.spaced("5 millis"), until: (status) => status.busy }),
          Effect.zipRight(read)
        )

      // The host holds the worker: the peer sees it busy, and nothing of the host's request.
      const hostCall = yield* Effect.fork(workers.callTool(id, "sleep", { ms: 60_000 }))
      yield* untilBusy(workers.status(id))
      const hostStatus = yield* workers.status(id)
      const foreignStatus = yield* peer.status(grant)
      const foreignBusy = yield* errorOf(peer.callTool(grant, "echo", { token: "b" }))
      const foreignCancel = yield* errorOf(peer.cancel(grant, hostStatus.requestId!))
      assert.isTrue((yield* workers.status(id)).busy, "the host's request runs on")
      yield* Fiber.interrupt(hostCall)

      // The peer holds it: its own request id is shown to it, and it may cancel it.
      const ownCall = yield* Effect.fork(Effect.flip(peer.callTool(grant, "sleep", { ms: 60_000 })))
      const ownStatus = yield* untilBusy(peer.status(grant))
      const ownBusy = yield* errorOf(peer.callTool(grant, "echo", { token: "c" }))
      yield* peer.cancel(grant, ownStatus.requestId!)
      const cancelled: Record<string, unknown> = Schema.encodeSync(McpWorkerError.McpWorkerError)(
        yield* Fiber.join(ownCall)
      )

      const result = yield* peer.callTool(grant, "echo", { token: "r" })
      const tools = yield* peer.listTools(grant)
      const describe = yield* peer.describe(grant)
      const outside = yield* errorOf(peer.callTool(grant, "fail"))
      const forged = yield* errorOf(peer.status("mcpg_forged"))
      const events = yield* Effect.scoped(
        Effect.gen(function* () {
          const pull = yield* Stream.toPull(peer.events(grant, { capacity: 4 }))
          const first = yield* Effect.fork(pull)
          const notify = peer.callTool(grant, "notify", { methods: ["notifications/message"], count: 1 })
          yield* notify.pipe(Effect.repeat({ until: () => first.unsafePoll() !== null }))
          return Chunk.toReadonlyArray(yield* Fiber.join(first))
        })
      )
      yield* workers.close(id)

      assert.deepStrictEqual(
        {
          status: fieldsOf(foreignStatus),
          ownStatus: fieldsOf(ownStatus),
          busy: fieldsOf(foreignBusy),
          cancelRefused: fieldsOf(foreignCancel),
          cancelled: fieldsOf(cancelled),
          // The server's own answer and notifications, as it sent them: its data, not the host's.
          result: fieldsOf(result),
          tools: fieldsOf(tools.tools.map((tool) => ({ name: tool.name }))),
          describe: typeof describe,
          outside: fieldsOf(outside),
          forged: fieldsOf(forged),
          events: fieldsOf(events)
        },
        {
          status: statusFields,
          ownStatus: statusFields,
          busy: ["_tag", "delivery", "requestId", "workerId"],
          cancelRefused: ["_tag", "delivery", "requestId", "workerId"],
          cancelled: ["_tag", "delivery", "reason", "requestId", "workerId"],
          result: ["content", "content[].text", "content[].type", "structuredContent", "structuredContent.token"],
          tools: ["[].name"],
          describe: "string",
          outside: ["_tag", "delivery", "message", "path", "where"],
          forged: ["_tag", "delivery", "workerId"],
          events: ["[].method", "[].params", "[].params.data", "[].params.level", "[].params.logger"]
        }
      )
      // The values: the host's internals are null, another caller's request is never named, and the peer's is.
      assert.isNumber(hostStatus.pid)
      assert.isNumber(hostStatus.threadId)
      assert.deepInclude(foreignStatus, { workerId: grant, busy: true, requestId: null, pid: null, threadId: null })
      assert.deepInclude(foreignStatus, { ownerPid: null })
      assert.deepInclude(foreignBusy, { _tag: "WorkerBusy", workerId: grant, requestId: "" })
      assert.deepInclude(foreignCancel, { _tag: "RequestNotPending", requestId: hostStatus.requestId })
      assert.deepInclude(ownStatus, { workerId: grant, busy: true, pid: null, threadId: null, ownerPid: null })
      assert.isString(ownStatus.requestId)
      assert.deepInclude(ownBusy, { _tag: "WorkerBusy", requestId: ownStatus.requestId })
      assert.deepInclude(cancelled, { _tag: "DeliveryUnknown", reason: "cancelled", requestId: ownStatus.requestId })
      // Only tools of the grant are listed (C44).
      assert.includeMembers(
        ["echo", "sleep", "notify"],
        tools.tools.map((tool) => tool.name)
      )
      assert.includeMembers(
        tools.tools.map((tool) => tool.name),
        ["echo", "sleep"]
      )
      // No path of the host's reaches the peer: not the socket's, not the server's command.
      const everything = JSON.stringify({ foreignStatus, ownStatus, foreignBusy, outside, forged, describe, events })
      for (const hostPath of [socket.dir, ...(statefulConfig().args ?? [])].filter((arg) => arg.startsWith("/"))) {
        assert.notInclude(everything, hostPath)
      }
      assert.notInclude(everything, id)
    })
  )
})
