// Tasks through the gateway: MCP SDK clients over streamable HTTP start, read, wait for, list and cancel tasks of real
// task-running fixture servers, each task reached only through the grant that started it. One host and one gateway
// serve the whole file.
import { assert, layer } from "@effect/vitest"
import { McpWorkers } from "@mcp-worker/core/McpWorkers"
import * as Tasks from "@mcp-worker/core/Tasks"
import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fixturePath, statefulConfig } from "../fixtures/servers.js"
import { modernPost } from "./helpers.js"

const tasksFixture = { command: process.execPath, args: [fixturePath("tasks")] }
const tasks26Fixture = { command: process.execPath, args: [fixturePath("tasks26"), "--exit-on-stdin-eof"] }

const gateway = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))

/** A 2025-11-25 SDK client of the gateway presenting `grant`; closed with the scope. */
const connect = (url: string, grant: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "serve-tasks-test", version: "1.0.0" })
      const headers = { Authorization: `Bearer ${grant}` }
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** The requests of the tasks capability, as a 2025-11-25 client sends them. */
const tasksOf = (client: Client) => ({
  start: (name: string, args: Record<string, unknown>) =>
    client.request(
      { method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } },
      CreateTaskResultSchema
    ),
  get: (taskId: string) => client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema),
  result: (taskId: string) => client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema),
  cancel: (taskId: string) => client.request({ method: "tasks/cancel", params: { taskId } }, CancelTaskResultSchema),
  list: () => client.request({ method: "tasks/list", params: {} }, ListTasksResultSchema)
})

/** What a rejected request carried: its code and its data. */
const rejection = (promise: () => Promise<unknown>) =>
  Effect.promise(() =>
    promise().then(
      () => assert.fail("the request succeeded"),
      (error: unknown) => {
        assert.instanceOf(error, McpError)
        return { code: (error as McpError).code, data: (error as McpError).data as Record<string, unknown> }
      }
    )
  )

/** A raw 2026-07-28 `tasks/update` of `taskId`, declaring the tasks extension: its JSON-RPC answer. */
const updateOf = (url: string, grant: string, taskId: string) =>
  Effect.promise(() =>
    modernPost(
      url,
      grant,
      { method: "tasks/update", name: taskId, params: { taskId, inputResponses: {} } },
      { extensions: { [Tasks.extensionId]: {} } }
    )
  )

/** A file whose creation ends a fixture task started with `until` (a test's word, not a time a busy machine overruns). */
const gateFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "serve-tasks-")), "done")

layer(gateway, { timeout: "60 seconds", excludeTestServices: true })("McpServe: tasks", (it) => {
  it.scoped(
    "C156, C157: a task runs to its result through its grant; another grant cannot see, get, wait for, cancel or list it",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const id = yield* workers.open(tasksFixture)
        const plain = yield* workers.open(statefulConfig())
        const a = yield* connect(serve.url!, yield* serve.grant({ tasks: id }))
        const b = yield* connect(serve.url!, yield* serve.grant({ tasks: id }))
        const none = yield* connect(serve.url!, yield* serve.grant({ counter: plain }))
        assert.isDefined(a.getServerCapabilities()?.tasks?.requests?.tools?.call)
        // A grant of no worker that runs tasks declares none, and the SDK's server refuses a task before any handler.
        assert.isUndefined(none.getServerCapabilities()?.tasks)
        const undeclared = yield* rejection(() => tasksOf(none).start("counter__inc", {}))
        assert.strictEqual(undeclared.code, -32603)

        const until = gateFile()
        const started = yield* Effect.promise(() => tasksOf(a).start("tasks__report", { topic: "tides", until }))
        const taskId = started.task.taskId
        assert.strictEqual((yield* Effect.promise(() => tasksOf(a).get(taskId))).status, "working")
        const listed = yield* Effect.promise(() => tasksOf(a).list())
        assert.deepStrictEqual(
          listed.tasks.map((task) => task.taskId),
          [taskId]
        )

        // C71: the other grant's every request of it is the answer to an id that never existed, and nothing is sent.
        const made = "00000000-0000-4000-8000-000000000000"
        for (const method of ["get", "result", "cancel"] as const) {
          const theirs = yield* rejection(() => tasksOf(b)[method](taskId))
          const never = yield* rejection(() => tasksOf(b)[method](made))
          assert.deepStrictEqual(theirs, never)
          assert.strictEqual(theirs.code, -32602)
          assert.deepStrictEqual(
            [theirs.data._tag, theirs.data.path, theirs.data.delivery],
            ["InvalidInput", "taskId", "not_sent"]
          )
          assert.notInclude(JSON.stringify(theirs), taskId)
        }
        assert.deepStrictEqual((yield* Effect.promise(() => tasksOf(b).list())).tasks, [])
        // The server's task was not touched: still working, as the host reads it.
        assert.strictEqual((yield* workers.getTask(id, taskId)).status, "working")

        fs.writeFileSync(until, "")
        const result = yield* Effect.promise(() => tasksOf(a).result(taskId))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "report on tides" }])
        assert.deepStrictEqual(result._meta?.["io.modelcontextprotocol/related-task"], { taskId })
        assert.strictEqual((yield* Effect.promise(() => tasksOf(a).get(taskId))).status, "completed")
      })
  )

  it.scoped("C158: a cancel reaches the server; a wait on the cancelled task says how it ended", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(tasksFixture)
      const a = yield* connect(serve.url!, yield* serve.grant({ tasks: id }))
      const started = yield* Effect.promise(() => tasksOf(a).start("tasks__report", { topic: "x", until: gateFile() }))
      const taskId = started.task.taskId
      const cancelled = yield* Effect.promise(() => tasksOf(a).cancel(taskId))
      assert.strictEqual(cancelled.status, "cancelled")
      // The server itself holds it cancelled, read by the host beside the gateway.
      assert.strictEqual((yield* workers.getTask(id, taskId)).status, "cancelled")
      const ended = yield* rejection(() => tasksOf(a).result(taskId))
      assert.deepStrictEqual(
        [ended.data._tag, ended.data.state, ended.data.delivery],
        ["TaskEnded", "cancelled", "delivered"]
      )
      assert.notInclude(JSON.stringify(ended), taskId)
    })
  )

  it.scoped("C159: what did not complete says its delivery; a task whose worker ended is not reached", () =>
    Effect.gen(function* () {
      const workers = yield* McpWorkers
      const serve = yield* McpServe.McpServe
      const id = yield* workers.open(tasksFixture)
      const a = yield* connect(serve.url!, yield* serve.grant({ tasks: id }))
      const until = gateFile()
      const started = yield* Effect.promise(() => tasksOf(a).start("tasks__report", { topic: "x", until }))
      const taskId = started.task.taskId
      // A result wait holds the worker's one slot (C70): a start meanwhile is busy, not sent.
      const waiting = tasksOf(a).result(taskId)
      yield* workers
        .status(id)
        .pipe(
          Effect.repeat({ until: (status) => status.busy, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("20 seconds")
        )
      const busy = yield* rejection(() => tasksOf(a).start("tasks__report", { topic: "y" }))
      assert.deepStrictEqual([busy.data._tag, busy.data.delivery], ["WorkerBusy", "not_sent"])
      fs.writeFileSync(until, "")
      assert.deepStrictEqual((yield* Effect.promise(() => waiting)).content, [{ type: "text", text: "report on x" }])

      yield* workers.close(id)
      const gone = yield* rejection(() => tasksOf(a).get(taskId))
      assert.deepStrictEqual([gone.data._tag, gone.data.delivery], ["UnknownWorker", "not_sent"])
      assert.deepStrictEqual((yield* Effect.promise(() => tasksOf(a).list())).tasks, [])
    })
  )

  it.scoped(
    "C160: a 2026-07-28 client (ext-tasks) runs tasks of either revision's worker; another grant cannot reach them",
    () =>
      Effect.gen(function* () {
        const workers = yield* McpWorkers
        const serve = yield* McpServe.McpServe
        const served = { tasks: yield* workers.open(tasksFixture), tasks26: yield* workers.open(tasks26Fixture) }
        // The host's own 2026-07-28 client, which runs tasks on ext-tasks (C124), is the gateway's client here.
        const client = (grant: string) =>
          workers.open({ url: serve.url!, headers: { Authorization: `Bearer ${grant}` }, protocol: "2026-07-28" })
        const grantA = yield* serve.grant(served)
        const a = yield* client(grantA)
        const b = yield* client(yield* serve.grant(served))
        assert.strictEqual((yield* workers.status(a)).era, "modern")

        const until = gateFile()
        const report = (yield* workers.startTask(a, "tasks__report", { topic: "tides", until })).task.taskId
        const research = (yield* workers.startTask(a, "tasks26__research", { topic: "x", gate: "never" })).task.taskId
        assert.strictEqual((yield* workers.getTask(a, report)).status, "working")
        assert.strictEqual((yield* workers.getTask(a, research)).status, "working")

        const refusal = (taskId: string) =>
          Effect.flip(workers.getTask(b, taskId)).pipe(
            Effect.map((error) => [error._tag, (error as { code?: number }).code, error.message])
          )
        const never = yield* refusal("00000000-0000-4000-8000-000000000000")
        assert.deepStrictEqual(never.slice(0, 2), ["ServerError", -32602])
        assert.deepStrictEqual(yield* refusal(report), never)
        assert.deepStrictEqual(yield* refusal(research), never)
        const cancelled = yield* Effect.flip(workers.cancelTask(b, research))
        assert.strictEqual((cancelled as { code?: number }).code, -32602)
        assert.strictEqual((yield* workers.getTask(served.tasks26, research)).status, "working")

        fs.writeFileSync(until, "")
        const result = yield* workers.taskResult(a, report, { timeout: "30 seconds" })
        assert.deepStrictEqual(result.content, [{ type: "text", text: "report on tides" }])
        // A cancel reaches the worker's server; the wait then says how the task ended (C123).
        assert.strictEqual((yield* workers.cancelTask(a, research)).status, "cancelled")
        assert.strictEqual((yield* workers.getTask(served.tasks26, research)).status, "cancelled")
        const ended = yield* Effect.flip(workers.taskResult(a, research, { timeout: "30 seconds" }))
        assert.deepStrictEqual([ended._tag, (ended as { state?: string }).state], ["TaskEnded", "cancelled"])

        // A 2025-11-25 worker's failed task is read whole: its error, without its id (C71).
        const doomed = (yield* workers.startTask(a, "tasks__report", { topic: "x", failWith: "broke" })).task.taskId
        const failed = yield* Effect.flip(workers.taskResult(a, doomed, { timeout: "30 seconds" }))
        assert.deepStrictEqual([failed._tag, (failed as { state?: string }).state], ["TaskEnded", "failed"])
        assert.include((failed as { statusMessage?: string }).statusMessage, "broke")
        assert.notInclude(JSON.stringify(failed), doomed)
        // A 2026-07-28 worker that answers at once is answered as it came.
        const now = yield* workers.startTask(a, "tasks26__quick", { topic: "now", now: true })
        assert.deepStrictEqual((now as { content?: unknown }).content, [{ type: "text", text: "quick: now" }])
        // tasks/update is the host's to send, not a client's through the gateway.
        const update = yield* updateOf(serve.url!, grantA, report)
        assert.deepStrictEqual(
          [update.error?.data?._tag, update.error?.data?.path, update.error?.data?.delivery],
          ["InvalidInput", "method", "not_sent"]
        )
        // The gateway's own clients end before the gateway does (C130 closes it first).
        yield* workers.close(a)
        yield* workers.close(b)
      })
  )
})
