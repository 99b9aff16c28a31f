// One behaviour suite for the request operations of the table beyond tools, run against every surface that
// offers them (the host service, the Promise client in the host's thread, the Promise client in a remote thread).
// It runs against the stateful fixture's resources, template, prompt and completions, and returns what it saw as
// plain data, so each surface's answers can be compared.

/** The request operations as Promises, as the Promise client has them (the host service is adapted to this). */
export interface Surface {
  readonly callTool: (id: string, name: string, args?: any, options?: any) => Promise<any>
  readonly listResources: (id: string, options?: { cursor?: string }) => Promise<any>
  readonly listResourceTemplates: (id: string) => Promise<any>
  readonly readResource: (id: string, uri: string) => Promise<any>
  readonly subscribeResource: (id: string, uri: string) => Promise<any>
  readonly unsubscribeResource: (id: string, uri: string) => Promise<any>
  readonly listPrompts: (id: string) => Promise<any>
  readonly getPrompt: (id: string, name: string, args?: Record<string, string>) => Promise<any>
  readonly complete: (id: string, params: any) => Promise<any>
  readonly ping: (id: string) => Promise<any>
}

const failure = (promise: Promise<unknown>): Promise<{ _tag: string; path?: string }> =>
  promise.then(
    () => ({ _tag: "none" }),
    (error: { _tag?: string; path?: string }) => ({
      _tag: error._tag ?? "other",
      ...(error.path === undefined ? {} : { path: error.path })
    })
  )

/** Runs every operation on a fresh worker of the stateful fixture; returns what each answered. */
export const exercise = async (mcp: Surface, id: string) => {
  const resources = await mcp.listResources(id)
  const templates = await mcp.listResourceTemplates(id)
  const before = await mcp.readResource(id, "memo://count")
  await mcp.callTool(id, "inc")
  const after = await mcp.readResource(id, "memo://count")
  const note = await mcp.readResource(id, "note://beta")
  const subscribed = await mcp.subscribeResource(id, "memo://count")
  const seen = (await mcp.callTool(id, "subscribed")).structuredContent.subscribed
  await mcp.unsubscribeResource(id, "memo://count")
  const seenAfter = (await mcp.callTool(id, "subscribed")).structuredContent.subscribed
  const prompts = await mcp.listPrompts(id)
  const prompt = await mcp.getPrompt(id, "greet", { name: "Ada" })
  const promptCompletion = await mcp.complete(id, {
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "name", value: "A" }
  })
  const templateCompletion = await mcp.complete(id, {
    ref: { type: "ref/resource", uri: "note://{name}" },
    argument: { name: "name", value: "b" }
  })
  const pong = await mcp.ping(id)
  return {
    resources: resources.resources.map((r: { uri: string; name: string }) => [r.uri, r.name]),
    templates: templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
    memo: [before.contents[0].text, after.contents[0].text],
    note: note.contents[0].text,
    subscribed,
    seen,
    seenAfter,
    prompts: prompts.prompts.map((p: { name: string }) => p.name),
    prompt: prompt.messages[0].content.text,
    promptCompletion: promptCompletion.completion.values,
    templateCompletion: templateCompletion.completion.values,
    pong,
    // Bad input is refused in the calling thread, with where it is, before anything is sent.
    badUri: await failure(mcp.readResource(id, "")),
    badPromptArgument: await failure(mcp.getPrompt(id, "greet", { name: 1 as unknown as string })),
    badCompletion: await failure(mcp.complete(id, [] as unknown as Record<string, unknown>)),
    // What the server says it does not have is its own answer.
    unknownResource: await failure(mcp.readResource(id, "memo://nothing"))
  }
}

/** What every surface must answer. */
export const expected = {
  resources: [["memo://count", "memo"]],
  templates: ["note://{name}"],
  memo: ["count=0", "count=1"],
  note: "note beta",
  subscribed: {},
  seen: ["memo://count"],
  seenAfter: [],
  prompts: ["greet"],
  prompt: "Hello Ada",
  promptCompletion: ["Ada", "Alan"],
  templateCompletion: ["beta"],
  pong: {},
  badUri: { _tag: "InvalidInput", path: "uri" },
  badPromptArgument: { _tag: "InvalidInput", path: "args.name" },
  badCompletion: { _tag: "InvalidInput", path: "params" },
  unknownResource: { _tag: "ServerError" }
}

/** `onProgress`: the server's notifications reach the caller's callback, in order; without it none is asked for. */
export const exerciseProgress = async (mcp: Surface, id: string) => {
  const events: Array<unknown> = []
  const result = await mcp.callTool(id, "progress", { steps: 3 }, { onProgress: (p: unknown) => events.push(p) })
  const without = await mcp.callTool(id, "progress", { steps: 2 })
  // A callback that throws is the caller's problem: the call still gets its answer.
  const throwing = await mcp.callTool(
    id,
    "progress",
    { steps: 2 },
    {
      onProgress: () => {
        throw new Error("caller bug")
      }
    }
  )
  // Progress and the answer in one write: every notification read before the answer reaches the callback.
  const burst: Array<unknown> = []
  await mcp.callTool(id, "progress_burst", { steps: 4 }, { onProgress: (p: unknown) => burst.push(p) })
  return {
    events,
    burst,
    result: result.structuredContent,
    without: without.structuredContent,
    throwing: throwing.structuredContent
  }
}

/** What every surface must answer to `exerciseProgress`. */
export const expectedProgress = {
  events: [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })),
  burst: [1, 2, 3, 4].map((i) => ({ progress: i, total: 4 })),
  result: { steps: 3, hadToken: true },
  without: { steps: 2, hadToken: false },
  throwing: { steps: 2, hadToken: true }
}

/** `events` as the Promise client has it, and `status` (the host service is adapted to this). */
export interface EventsSurface {
  readonly callTool: (id: string, name: string, args?: any) => Promise<any>
  readonly status: (id: string) => Promise<any>
  readonly close: (id: string) => Promise<any>
  readonly events: (id: string, options?: { capacity?: number }) => AsyncIterator<{ method: string; params: any }>
}

const listChanged = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed"
]
const every = [...listChanged, "notifications/resources/updated", "notifications/message"]

const take = async (events: AsyncIterator<{ method: string; params: any }>, n: number) => {
  const taken: Array<{ method: string; params: any }> = []
  while (taken.length < n) {
    const next = await events.next()
    if (next.done === true) break
    taken.push(next.value)
  }
  return taken
}

/**
 * `events` on a fresh worker of the stateful fixture: every kind arrives in order; a subscriber that does not keep
 * up keeps the newest and the rest are counted as dropped; one that left gets nothing and costs nothing; and every
 * subscription ends when the worker closes. Closes the worker.
 */
export const exerciseEvents = async (mcp: EventsSurface, id: string) => {
  const before = (await mcp.status(id)).notifications
  const all = mcp.events(id)
  await mcp.callTool(id, "notify", { methods: every })
  const received = await take(all, every.length)
  const after = (await mcp.status(id)).notifications

  // Capacity 4, not read while 20 log lines arrive: one may already be on its way to the reader, the rest wait in
  // a buffer of 4, and every other line is dropped and counted.
  const slow = mcp.events(id, { capacity: 4 })
  await mcp.callTool(id, "notify", { methods: ["notifications/message"], count: 20 })
  const lines: Array<string> = []
  for (const line of await take(all, 20)) lines.push(line.params.data)
  const slowLines: Array<string> = []
  while (!slowLines.includes("line 19") && slowLines.length < 21) {
    const next = await take(slow, 1)
    if (next.length === 0) break
    slowLines.push(...next.map((e) => e.params.data))
  }
  const dropped = (await mcp.status(id)).notifications.dropped - after.dropped

  // Both leave: from now on nobody buffers anything, so nothing is dropped however much arrives.
  await all.return?.()
  await slow.return?.()
  await mcp.callTool(id, "notify", { methods: ["notifications/message"], count: 300 })
  const afterLeaving = (await mcp.status(id)).notifications

  const ending = mcp.events(id)
  await mcp.callTool(id, "notify", { methods: ["notifications/tools/list_changed"] })
  await mcp.close(id)
  const rest = await take(ending, 10)
  return {
    before: { received: before.received, dropped: before.dropped, listChanged: before.listChanged },
    received: received.map((e) => e.method),
    updated: received.find((e) => e.method === "notifications/resources/updated")?.params,
    message: received.find((e) => e.method === "notifications/message")?.params,
    counted: after.received - before.received,
    stamped: Object.values(after.listChanged).every((at) => typeof at === "string" && !Number.isNaN(Date.parse(at))),
    lines: lines.length === 20 && lines.every((line, i) => line === `line ${i}`),
    slowKeptNewest: slowLines.slice(-4),
    slowAtMost: slowLines.length <= 5,
    droppedIsTheRest: dropped === 20 - slowLines.length,
    afterLeaving: {
      received: afterLeaving.received - after.received,
      dropped: afterLeaving.dropped - after.dropped - dropped
    },
    rest: rest.map((e) => e.method)
  }
}

/**
 * Calls whose server sends `count` log lines before it answers, each followed at once by `status`: what each read
 * counts since the one before. A remote thread's answer comes straight from the owner thread while the notifications
 * go to the host, so this is what C30's "a status read after an answer" holds to.
 */
export const exerciseCountsAfterAnswer = async (mcp: EventsSurface, id: string, rounds = 8, count = 500) => {
  const counted: Array<number> = []
  let before = (await mcp.status(id)).notifications.received
  for (let round = 0; round < rounds; round++) {
    await mcp.callTool(id, "notify", { methods: ["notifications/message"], count })
    const received = (await mcp.status(id)).notifications.received
    counted.push(received - before)
    before = received
  }
  return counted
}

/**
 * A subscription made right before a call, in a thread that then stays busy while the call is answered: what the
 * call makes the server send still reaches the subscriber, because the subscription went out before the call did.
 * Gives the methods received, in order, or why nothing came.
 */
export const exerciseSubscribeThenBusy = async (mcp: EventsSurface, id: string) => {
  const events = mcp.events(id)
  const call = mcp.callTool(id, "notify", { methods: every })
  // Nothing else runs in this thread meanwhile: whatever it would have posted later goes after the notifications.
  const until = Date.now() + 300
  while (Date.now() < until) {
    // busy
  }
  await call
  let timer: ReturnType<typeof setTimeout> | undefined
  const received = await Promise.race([
    take(events, every.length),
    new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 5000)))
  ])
  clearTimeout(timer)
  await events.return?.()
  return received === null ? "nothing within 5 s" : received.map((e) => e.method)
}

/** What `exerciseSubscribeThenBusy` must give. */
export const expectedSubscribeThenBusy = every

/** What every surface must answer to `exerciseEvents`. */
export const expectedEvents = {
  before: { received: 0, dropped: 0, listChanged: { tools: null, resources: null, prompts: null } },
  received: every,
  updated: { uri: "memo://count?0" },
  message: { level: "info", logger: "fixture", data: "line 0" },
  counted: 5,
  stamped: true,
  lines: true,
  slowKeptNewest: ["line 16", "line 17", "line 18", "line 19"],
  slowAtMost: true,
  droppedIsTheRest: true,
  afterLeaving: { received: 320, dropped: 0 },
  rest: ["notifications/tools/list_changed"]
}
