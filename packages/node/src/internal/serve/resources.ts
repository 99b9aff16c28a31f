// C141, C142
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import { InvalidInput, type RequestError } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Gateway from "./gateway.js"

export interface Capabilities {
  readonly tools?: { readonly listChanged: true }
  readonly resources?: { readonly listChanged: true; readonly subscribe?: true }
  readonly prompts?: { readonly listChanged: true }
  readonly completions?: {}
}

/** C161, C139, C143 */
export const capabilitiesOf = (gateway: Gateway.Gateway, bundle: Gateway.Bundle | undefined): Capabilities => {
  const declared = bundle === undefined ? [] : Gateway.liveEntries(gateway, bundle)
  const serves = declared.flatMap(([entry]) => gateway.registry.servesOf(entry.workerId) ?? [])
  const some = (declares: (serves: NonNullable<OwnerProtocol.OpenInfo["serves"]>) => unknown) => serves.some(declares)
  return {
    ...(some((s) => s.tools) && { tools: { listChanged: true } }),
    ...(some((s) => s.resources) && {
      resources: { listChanged: true, ...(some((s) => s.resources?.subscribe) && { subscribe: true }) }
    }),
    ...(some((s) => s.prompts) && { prompts: { listChanged: true } }),
    ...(some((s) => s.completions) && { completions: {} })
  }
}

/** C139, C143 */
export const listChanged: ReadonlyArray<string> = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed"
]

/** C30 */
export const watch = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  heard: (notification: { readonly method: string; readonly params: Record<string, unknown> }) => boolean,
  announce: (method: string, params?: Record<string, unknown>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.forEach(
    bundle.entries.values(),
    (entry) =>
      gateway.registry.service.events(entry.workerId).pipe(
        Stream.filter(heard),
        Stream.runForEach((notification) => announce(notification.method, notification.params)),
        Effect.ignore,
        Effect.zipRight(Effect.forEach(listChanged, (method) => announce(method), { discard: true }))
      ),
    { concurrency: "unbounded", discard: true }
  )

type Listing = "listResources" | "listResourceTemplates" | "listPrompts"
type Item = Record<string, unknown>

const keyOf = {
  listResources: "resources",
  listResourceTemplates: "resourceTemplates",
  listPrompts: "prompts"
} as const

const invalid = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

const send = (gateway: Gateway.Gateway, entry: Gateway.Entry, name: keyof Operations.Requests, params: Item) =>
  Gateway.request(gateway, entry, name, params) as Effect.Effect<Item, RequestError>

/** A cursor seen before ends it. */
const listOne = (gateway: Gateway.Gateway, entry: Gateway.Entry, name: Listing) =>
  Effect.gen(function* () {
    const items: Array<Item> = []
    const seen = new Set<string>()
    let cursor: string | undefined = undefined
    for (let page = 0; page < AgentHost.maxPages; page++) {
      const result: Item = yield* send(gateway, entry, name, cursor === undefined ? {} : { cursor })
      items.push(...((result[keyOf[name]] as ReadonlyArray<Item> | undefined) ?? []))
      const next = result.nextCursor
      if (typeof next !== "string" || seen.has(next)) break
      seen.add(next)
      cursor = next
    }
    return items
  })

/** C8 */
const listEach = (gateway: Gateway.Gateway, bundle: Gateway.Bundle, name: Listing) =>
  Effect.forEach(Gateway.liveEntries(gateway, bundle), ([entry]) =>
    listOne(gateway, entry, name).pipe(
      Effect.orElseSucceed((): ReadonlyArray<Item> => []),
      Effect.map((items) => [entry, items] as const)
    )
  )

/** C141 */
export const listPrompts = (gateway: Gateway.Gateway, bundle: Gateway.Bundle): Effect.Effect<ReadonlyArray<Item>> =>
  Effect.map(listEach(gateway, bundle, "listPrompts"), (lists) =>
    lists.flatMap(([entry, prompts]) =>
      prompts.map((prompt) => ({ ...prompt, name: Gateway.nameIn(gateway, bundle, entry, String(prompt.name)) }))
    )
  )

/** C142 */
export const listResources = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  name: "listResources" | "listResourceTemplates"
): Effect.Effect<ReadonlyArray<Item>> =>
  Effect.map(listEach(gateway, bundle, name), (lists) => lists.flatMap(([, items]) => items))

/** Level 1. */
const expands = (template: string, uri: string): boolean => {
  const pattern = template
    .split(/\{[^}]*\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/]+")
  return new RegExp(`^${pattern}$`).test(uri)
}

/** C142 */
export const resourceRoute = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  uri: unknown
): Effect.Effect<Gateway.Entry, InvalidInput> =>
  Effect.gen(function* () {
    if (typeof uri !== "string") return yield* invalid("uri", "a resource is named by its uri, a string")
    const live = Gateway.liveEntries(gateway, bundle)
    if (live.length === 1) return live[0]![0]
    const listed = yield* listEach(gateway, bundle, "listResources")
    const templated = yield* listEach(gateway, bundle, "listResourceTemplates")
    const owners = new Set<Gateway.Entry>()
    for (const [entry, items] of listed) if (items.some((item) => item.uri === uri)) owners.add(entry)
    for (const [entry, items] of templated) {
      if (items.some((item) => typeof item.uriTemplate === "string" && expands(item.uriTemplate, uri)))
        owners.add(entry)
    }
    const [first, ...others] = [...owners]
    if (first === undefined) return yield* invalid("uri", "no worker of this grant serves that resource")
    if (others.length > 0) {
      const names = [first, ...others].map((entry) => entry.name).join(", ")
      return yield* invalid("uri", `more than one worker of this grant serves that resource: ${names}`)
    }
    return first
  })

export const resourceRequest = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  name: "readResource" | "subscribeResource" | "unsubscribeResource",
  params: Item
): Effect.Effect<Item, RequestError> =>
  Effect.flatMap(resourceRoute(gateway, bundle, params.uri), (entry) => send(gateway, entry, name, params))

/** A served prompt name to its worker and own name, or `InvalidInput` at `path`. */
const toPrompt = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  served: unknown,
  path: string,
  request: (entry: Gateway.Entry, name: string) => Effect.Effect<Item, RequestError>
): Effect.Effect<Item, RequestError> => {
  const route = Gateway.routeOf(gateway, bundle, String(served))
  if (route === undefined) return Effect.fail(invalid(path, "this grant serves no prompt of that name"))
  return request(route[0], route[1])
}

export const getPrompt = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  params: Item
): Effect.Effect<Item, RequestError> =>
  Effect.suspend(() =>
    toPrompt(gateway, bundle, params.name, "name", (entry, name) =>
      send(gateway, entry, "getPrompt", { ...params, name })
    )
  )

/** C142 */
export const complete = (
  gateway: Gateway.Gateway,
  bundle: Gateway.Bundle,
  params: Item
): Effect.Effect<Item, RequestError> =>
  Effect.suspend(() => {
    const ref = (params.ref ?? {}) as Item
    if (ref.type === "ref/prompt") {
      return toPrompt(gateway, bundle, ref.name, "ref.name", (entry, name) =>
        send(gateway, entry, "complete", { ...params, ref: { ...ref, name } })
      )
    }
    return Effect.flatMap(resourceRoute(gateway, bundle, ref.uri), (entry) => send(gateway, entry, "complete", params))
  })

export type Answer = <A>(
  request: (bundle: Gateway.Bundle) => Effect.Effect<A, RequestError>,
  signal: AbortSignal
) => Promise<A>

/** C142, C162 */
const kindOf = {
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "completion/complete": "completions"
} as const satisfies Record<string, keyof Capabilities>

export type Method = keyof typeof kindOf

export type Handle = (params: Item, signal: AbortSignal) => Promise<Item>

const handlesOf = (gateway: Gateway.Gateway, answer: Answer): Record<Method, Handle> => ({
  "resources/list": async (_, signal) => ({
    resources: await answer((bundle) => listResources(gateway, bundle, "listResources"), signal)
  }),
  "resources/templates/list": async (_, signal) => ({
    resourceTemplates: await answer((bundle) => listResources(gateway, bundle, "listResourceTemplates"), signal)
  }),
  "resources/read": (params, signal) =>
    answer((bundle) => resourceRequest(gateway, bundle, "readResource", params), signal),
  "prompts/list": async (_, signal) => ({ prompts: await answer((bundle) => listPrompts(gateway, bundle), signal) }),
  "prompts/get": (params, signal) => answer((bundle) => getPrompt(gateway, bundle, params), signal),
  "completion/complete": (params, signal) => answer((bundle) => complete(gateway, bundle, params), signal)
})

/** C161 */
export const declaredHandles = (
  gateway: Gateway.Gateway,
  answer: Answer,
  capabilities: Capabilities
): ReadonlyArray<readonly [Method, Handle]> =>
  (Object.entries(handlesOf(gateway, answer)) as Array<[Method, Handle]>).filter(
    ([method]) => capabilities[kindOf[method]] !== undefined
  )

const legacySchemas = {
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "prompts/get": GetPromptRequestSchema,
  "completion/complete": CompleteRequestSchema
} satisfies Record<Method, unknown>

export const register = (
  server: Server,
  answer: Answer,
  gateway: Gateway.Gateway,
  capabilities: Capabilities,
  subscribed: Set<string>
): void => {
  for (const [method, handle] of declaredHandles(gateway, answer, capabilities)) {
    // The SDK's schemas differ per method, which TypeScript cannot follow through the table.
    server.setRequestHandler(
      legacySchemas[method] as typeof CompleteRequestSchema,
      (request, extra) => handle(request.params as Item, extra.signal) as never
    )
  }
  if (capabilities.resources?.subscribe !== true) return
  const resource =
    (name: "subscribeResource" | "unsubscribeResource") =>
    (request: { params: Item }, extra: { signal: AbortSignal }) =>
      answer((bundle) => resourceRequest(gateway, bundle, name, request.params), extra.signal) as Promise<never>
  // C143
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const result = await resource("subscribeResource")(request, extra)
    subscribed.add(request.params.uri)
    return result
  })
  server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
    subscribed.delete(request.params.uri)
    return resource("unsubscribeResource")(request, extra)
  })
}
