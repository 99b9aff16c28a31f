// The tasks suite of the 2026-07-28 revision (the `io.modelcontextprotocol/tasks` extension), run against every
// surface that offers tasks, on a worker of our fixture (test/fixtures/tasks26.server.ts). The operations and their
// answers are the 2025-11-25 revision's (tasksSuite.ts); what it sees is returned as plain data for `expectedTasks26`.
import { clarification, type TaskSurface } from "./tasksSuite.js"

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ _tag: "none" }),
    (error: {
      _tag?: string
      delivery?: string
      reason?: string
      message?: string
      code?: number
      state?: string
      statusMessage?: string
    }) => ({
      _tag: error._tag ?? "other",
      delivery: error.delivery,
      ...(error.reason === undefined ? {} : { reason: error.reason }),
      ...(error.code === undefined ? {} : { code: error.code }),
      ...(error.state === undefined ? {} : { state: error.state }),
      ...(error.statusMessage === undefined ? {} : { statusMessage: error.statusMessage }),
      startTask: (error.message ?? "").includes("startTask")
    })
  )

const text = (result: { content?: Array<{ text?: string }> }): string =>
  (result.content ?? []).map((c) => c.text ?? "").join("\n")

const messageOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "",
    (error: { message?: string }) => error.message ?? ""
  )

/** Runs the suite on a worker of the tasks26 fixture whose host answers elicitations with `clarification`. */
export const exerciseTasks26 = async (mcp: TaskSurface, id: string) => {
  // The server answers a plain call of a tool it runs only as a task with -32021: an error that says what to do (C75a).
  const plain = await failure(mcp.callTool(id, "research", { topic: "x" }))
  const plainQuick = text(await mcp.callTool(id, "quick", { topic: "q" }))
  // There is no tasks/list on this revision (C75).
  const list = await failure(mcp.listTasks(id))
  const gated = await mcp.startTask(id, "research", { topic: "tides", gate: "g1" })
  const taskId: string = gated.task.taskId
  // The worker is free while the task runs (C70).
  const pong = await mcp.ping(id)
  const got = await mcp.getTask(id, taskId)
  // The task waits at its gate: a wait past its budget ends the wait only (C73).
  const shortWait = await failure(mcp.taskResult(id, taskId, { timeout: "300 millis" }))
  const afterWait = (await mcp.getTask(id, taskId)).status
  await mcp.callTool(id, "release", { gate: "g1" })
  const result = text(await mcp.taskResult(id, taskId, { timeout: "60 seconds" }))
  const done = await mcp.getTask(id, taskId)
  // The task's question reaches the host's elicitation handler; its answer goes back with tasks/update (C75b).
  const asking = await mcp.startTask(id, "research", { topic: "python", ask: true, stages: 30, stageMs: 100 })
  const waiting = mcp.taskResult(id, asking.task.taskId, { timeout: "60 seconds" })
  while (!(await mcp.status(id)).busy) await new Promise((resolve) => setTimeout(resolve, 5))
  // A result wait takes the worker's one slot: a start meanwhile is refused, not sent (C70).
  const busy = await failure(mcp.startTask(id, "quick", { topic: "later" }))
  const clarified = text(await waiting)
  // A task that ended without a result says how it ended, its id kept out of its words (C123, C71).
  const failed = await failure(
    mcp.startTask(id, "research", { fail: true }).then((one) => mcp.taskResult(id, one.task.taskId))
  )
  // A cancel is an ack on this revision; the state after it is read and answered (C74).
  const doomed = await mcp.startTask(id, "research", { topic: "moot", gate: "g2" })
  const cancelled = (await mcp.cancelTask(id, doomed.task.taskId)).status
  const cancelledWait = await failure(mcp.taskResult(id, doomed.task.taskId))
  await mcp.callTool(id, "release", { gate: "g2" })
  const optional = await mcp.startTask(id, "quick", { topic: "both" })
  const optionalResult = text(await mcp.taskResult(id, optional.task.taskId, { timeout: "60 seconds" }))
  // The server may answer a start at once: its result stands, with no task (C75a).
  const atOnce = await mcp.startTask(id, "quick", { topic: "now", now: true })
  // A server's error about a task keeps its id out (C71).
  const unknownId = "no-such-task-4f1c"
  const unknown = await failure(mcp.getTask(id, unknownId))
  const unknownMessage = (await messageOf(mcp.getTask(id, unknownId))).includes(unknownId)
  // C124: the reads the caller asked for and no others, long after its start (the cancel's state, the wait's one look at an ended task).
  const doomedGets = text(await mcp.callTool(id, "gets", { taskId: doomed.task.taskId }))
  const status = JSON.stringify(await mcp.status(id))
  const secret = [taskId, asking.task.taskId, doomed.task.taskId].some((one) => status.includes(one))
  return {
    plain,
    plainQuick,
    list,
    started: [gated.task.status, gated.task.ttl, gated.task.pollInterval, typeof gated.task.createdAt],
    pong,
    got: [got.taskId === taskId, got.status, got.ttl],
    shortWait,
    afterWait,
    result,
    done: [done.status, text(done.result ?? {})],
    busy,
    clarified,
    failed,
    cancelled,
    cancelledWait,
    doomedGets,
    optional: [optional.task.status, optionalResult],
    atOnce: [atOnce.task, text(atOnce)],
    unknown,
    unknownMessage,
    secret
  }
}

/** What every surface must see. */
export const expectedTasks26 = {
  plain: { _tag: "ServerError", delivery: "delivered", code: -32021, startTask: true },
  plainQuick: "quick: q",
  list: { _tag: "InvalidInput", delivery: "not_sent", startTask: true },
  started: ["working", 120_000, 50, "string"],
  pong: {},
  got: [true, "working", 120_000],
  shortWait: { _tag: "DeliveryUnknown", delivery: "unknown", reason: "timeout", startTask: false },
  afterWait: "working",
  result: "research: tides",
  done: ["completed", "research: tides"],
  busy: { _tag: "WorkerBusy", delivery: "not_sent", startTask: false },
  clarified: `research: python (${clarification.content.interpretation})`,
  failed: {
    _tag: "TaskEnded",
    delivery: "delivered",
    code: -32050,
    state: "failed",
    statusMessage: "the research of [task] failed",
    startTask: false
  },
  cancelled: "cancelled",
  cancelledWait: {
    _tag: "TaskEnded",
    delivery: "delivered",
    state: "cancelled",
    statusMessage: "cancelled by the client",
    startTask: false
  },
  doomedGets: "2",
  optional: ["working", "quick: both"],
  atOnce: [undefined, "quick: now"],
  unknown: { _tag: "ServerError", delivery: "delivered", code: -32602, startTask: false },
  unknownMessage: false,
  secret: false
}
