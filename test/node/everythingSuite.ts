// One behaviour suite against the published `@modelcontextprotocol/server-everything` (stdio), run from the host and
// from a remote thread: every request operation beyond tools, progress, and the server's requests answered by the
// host's handlers (`everythingHandlers`). It returns what it saw as plain data, so the surfaces can be compared.
import type { Surface } from "./operationsSuite.js"

/** What the host's handlers answer: the suite checks that the server got exactly this. */
export const everythingAnswers = {
  elicitation: { action: "accept", content: { name: "Ada", check: true, email: "ada@example.com" } },
  sampling: { role: "assistant", content: { type: "text", text: "hello from the host" }, model: "test-model" },
  roots: { roots: [{ uri: "file:///tmp/project", name: "project" }] }
} as const

const texts = (result: { content?: Array<{ text?: string }> }): string =>
  (result.content ?? []).map((c) => c.text ?? "").join("\n")

/** Runs the suite on a fresh worker of server-everything. */
export const exerciseEverything = async (mcp: Surface & { status: (id: string) => Promise<any> }, id: string) => {
  const resources = await mcp.listResources(id)
  const first = resources.resources[0]
  const read = await mcp.readResource(id, first.uri)
  const templates = await mcp.listResourceTemplates(id)
  const dynamic = await mcp.readResource(id, "demo://resource/dynamic/text/7")
  const prompts = await mcp.listPrompts(id)
  const prompt = await mcp.getPrompt(id, "args-prompt", { city: "Paris", state: "Texas" })
  const completion = await mcp.complete(id, {
    ref: { type: "ref/prompt", name: "completable-prompt" },
    argument: { name: "department", value: "E" }
  })
  const progress: Array<unknown> = []
  const long = await mcp.callTool(
    id,
    "trigger-long-running-operation",
    { duration: 0.3, steps: 3 },
    { onProgress: (p: unknown) => progress.push(p) }
  )
  const elicited = texts(await mcp.callTool(id, "trigger-elicitation-request", {}))
  const sampled = texts(await mcp.callTool(id, "trigger-sampling-request", { prompt: "hi", maxTokens: 5 }))
  const roots = texts(await mcp.callTool(id, "get-roots-list", {}))
  const notifications = (await mcp.status(id)).notifications
  return {
    resources: resources.resources.length > 0 && resources.resources.every((r: { uri: string }) => r.uri.length > 0),
    read: read.contents[0].uri === first.uri && typeof read.contents[0].text === "string",
    templates: templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate).sort(),
    dynamic: dynamic.contents[0].uri,
    subscribed: await mcp.subscribeResource(id, first.uri),
    unsubscribed: await mcp.unsubscribeResource(id, first.uri),
    prompts: prompts.prompts.map((p: { name: string }) => p.name).sort(),
    prompt: prompt.messages[0].content.text,
    completion: completion.completion.values,
    pong: await mcp.ping(id),
    long: texts(long),
    progress,
    elicited: elicited.includes("Name: Ada") && elicited.includes("Email: ada@example.com"),
    sampled: sampled.includes("hello from the host") && sampled.includes("test-model"),
    roots: roots.includes("file:///tmp/project"),
    // The server announces the tools it registers once it knows the client's capabilities, and logs the roots it
    // received; both arrive as notifications, counted in status.
    toolsChanged: typeof notifications.listChanged.tools === "string",
    received: notifications.received >= 2
  }
}

/** What every surface must see. */
export const expectedEverything = {
  resources: true,
  read: true,
  templates: ["demo://resource/dynamic/blob/{resourceId}", "demo://resource/dynamic/text/{resourceId}"],
  dynamic: "demo://resource/dynamic/text/7",
  subscribed: {},
  unsubscribed: {},
  prompts: ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"],
  prompt: "What's weather in Paris, Texas?",
  completion: ["Engineering"],
  pong: {},
  long: "Long running operation completed. Duration: 0.3 seconds, Steps: 3.",
  progress: [1, 2, 3].map((progress) => ({ progress, total: 3 })),
  elicited: true,
  sampled: true,
  roots: true,
  toolsChanged: true,
  received: true
}
