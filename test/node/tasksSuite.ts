// One behaviour suite for tasks, run against every surface that offers them (the host service, the Promise client in
// the host's thread and in a remote thread, a socket peer by grant). It drives the published server-everything's
// `simulate-research-query` (four stages of about a second, one elicitation when `ambiguous`) and returns what it saw
// as plain data, so each surface's answers can be compared with `expectedTasks`.

/** The operations the suite uses, as Promises (the host service is adapted to this). */
export interface TaskSurface {
  readonly listTools: (id: string) => Promise<any>
  readonly callTool: (id: string, name: string, args?: any, options?: any) => Promise<any>
  readonly startTask: (id: string, name: string, args?: any, options?: any) => Promise<any>
  readonly getTask: (id: string, taskId: string, options?: any) => Promise<any>
  readonly taskResult: (id: string, taskId: string, options?: any) => Promise<any>
  readonly cancelTask: (id: string, taskId: string, options?: any) => Promise<any>
  readonly listTasks: (id: string, options?: any) => Promise<any>
  readonly ping: (id: string) => Promise<any>
  readonly status: (id: string) => Promise<any>
}

/** The tool of server-everything that runs only as a task. */
export const researchTool = "simulate-research-query"

/** What the host's elicitation handler answers to the research's question. */
export const clarification = { action: "accept", content: { interpretation: "snake" } } as const

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ _tag: "none" }),
    (error: { _tag?: string; delivery?: string; reason?: string; message?: string; state?: string }) => ({
      _tag: error._tag ?? "other",
      delivery: error.delivery,
      ...(error.reason === undefined ? {} : { reason: error.reason }),
      ...(error.state === undefined ? {} : { state: error.state }),
      startTask: (error.message ?? "").includes("startTask")
    })
  )

const text = (result: { content?: Array<{ text?: string }> }): string =>
  (result.content ?? []).map((c) => c.text ?? "").join("\n")

/** Runs the suite on a worker of server-everything whose host answers elicitations with `clarification`. */
export const exerciseTasks = async (mcp: TaskSurface, id: string) => {
  const listed = (await mcp.listTools(id)).tools.find((tool: { name: string }) => tool.name === researchTool)
  // Listed as requiring a task: a plain call is refused before anything is sent (C72).
  const plain = await failure(mcp.callTool(id, researchTool, { topic: "x" }))
  const forbidden = await failure(mcp.startTask(id, "echo", { message: "x" }))
  const badTtl = await failure(mcp.startTask(id, researchTool, { topic: "x" }, { ttl: "forever" }))
  const started = await mcp.startTask(id, researchTool, { topic: "tides" }, { ttl: "2 minutes" })
  const taskId: string = started.task.taskId
  // The task runs on the server; the worker is free for other requests meanwhile (C70).
  const pong = await mcp.ping(id)
  const got = await mcp.getTask(id, taskId)
  const listedTasks = (await mcp.listTasks(id)).tasks.map((task: { taskId: string }) => task.taskId === taskId)
  // A wait that the budget ends ends only the wait: the task runs on and its result is still there (C73).
  const shortWait = await failure(mcp.taskResult(id, taskId, { timeout: "300 millis" }))
  const afterWait = (await mcp.getTask(id, taskId)).status
  const result = await mcp.taskResult(id, taskId, { timeout: "60 seconds" })
  const done = (await mcp.getTask(id, taskId)).status
  // An ambiguous query asks the host's elicitation handler while the result is awaited.
  const ambiguous = await mcp.startTask(id, researchTool, { topic: "python", ambiguous: true })
  const waiting = mcp.taskResult(id, ambiguous.task.taskId, { timeout: "60 seconds" })
  while (!(await mcp.status(id)).busy) await new Promise((resolve) => setTimeout(resolve, 5))
  // A wait for a result takes the worker's one slot; a start meanwhile is a request like any other (C70).
  const busy = await failure(mcp.startTask(id, researchTool, { topic: "later" }))
  const clarified = await waiting
  // A cancel answers the task's state after it (C74).
  const doomed = await mcp.startTask(id, researchTool, { topic: "moot" })
  const cancelled = await mcp.cancelTask(id, doomed.task.taskId)
  // Its wait is answered with how it ended, not a bare server error (C123).
  const cancelledWait = await failure(mcp.taskResult(id, doomed.task.taskId, { timeout: "60 seconds" }))
  const unknown = await failure(mcp.getTask(id, "no-such-task"))
  const emptyId = await failure(mcp.getTask(id, ""))
  // A task id is a secret: no status shows one (C71).
  const status = JSON.stringify(await mcp.status(id))
  const secret = [taskId, ambiguous.task.taskId, doomed.task.taskId].some((one) => status.includes(one))
  return {
    support: listed.execution,
    plain,
    forbidden,
    badTtl,
    started: [started.task.status, started.task.ttl > 0, typeof started.task.createdAt],
    pong,
    got: [got.taskId === taskId, got.status],
    listed: listedTasks.includes(true),
    shortWait,
    afterWait: ["working", "completed"].includes(afterWait),
    result: [
      text(result).includes("Research Report: tides"),
      result._meta?.["io.modelcontextprotocol/related-task"]?.taskId === taskId
    ],
    done,
    busy,
    clarified: text(clarified).includes("python (snake)"),
    cancelled: cancelled.status,
    cancelledWait,
    unknown: unknown._tag,
    emptyId: emptyId._tag,
    secret
  }
}

/** What every surface must see. */
export const expectedTasks = {
  support: { taskSupport: "required" },
  plain: { _tag: "InvalidInput", delivery: "not_sent", startTask: true },
  forbidden: { _tag: "InvalidInput", delivery: "not_sent", startTask: false },
  badTtl: { _tag: "InvalidInput", delivery: "not_sent", startTask: false },
  started: ["working", true, "string"],
  pong: {},
  got: [true, "working"],
  listed: true,
  shortWait: { _tag: "DeliveryUnknown", delivery: "unknown", reason: "timeout", startTask: false },
  afterWait: true,
  result: [true, true],
  done: "completed",
  busy: { _tag: "WorkerBusy", delivery: "not_sent", startTask: false },
  clarified: true,
  cancelled: "cancelled",
  cancelledWait: { _tag: "TaskEnded", delivery: "delivered", state: "cancelled", startTask: false },
  unknown: "ServerError",
  emptyId: "InvalidInput",
  secret: false
}
