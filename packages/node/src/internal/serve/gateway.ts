// C44, C119: through a listener grant per worker, so the gateway admits and projects exactly as sockets do; C3.
import * as AgentHost from "@mcp-worker/core/agentHost/AgentHost"
import type { Tool } from "@modelcontextprotocol/client"
import { InvalidInput, McpWorkerError, type RequestError, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import * as Operations from "@mcp-worker/core/Operations"
import type * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as Effect from "effect/Effect"
import type * as JsonValue from "@mcp-worker/core/JsonValue"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import type * as McpServeFace from "../../McpServe.js"
import type { HostRegistry } from "../host/service.js"
import type { Asker } from "../shared/connection.js"
import * as Grants from "../listen/grants.js"

export interface Entry {
  readonly name: string
  readonly workerId: string
  readonly grant: string
}

export interface Bundle {
  readonly entries: ReadonlyMap<string, Entry>
  /** `Infinity` without a ttl. */
  readonly expiresAt: number
  /** C141 */
  readonly bare?: Entry | undefined
}

export interface Gateway {
  readonly registry: HostRegistry
  /** Never handed out. */
  readonly inner: Grants.Grants
  readonly bearers: Grants.Grants
  readonly bundles: Map<string, Bundle>
  readonly separator: string
  /** C8 */
  readonly lastTools: Map<string, ReadonlyArray<Tool>>
  closing: boolean
}

const served: Record<McpServeFace.ServedOperation, true> = {
  listTools: true,
  callTool: true,
  listResources: true,
  listResourceTemplates: true,
  readResource: true,
  subscribeResource: true,
  unsubscribeResource: true,
  listPrompts: true,
  getPrompt: true,
  complete: true,
  startTask: true,
  getTask: true,
  taskResult: true,
  cancelTask: true,
  listTasks: true
}
const operations = Object.keys(served) as ReadonlyArray<McpServeFace.ServedOperation>

const namePattern = /^[A-Za-z0-9_.-]{1,64}$/

const invalid = (where: "config" | "arguments", path: string, message: string) =>
  new InvalidInput({ where, path, message, delivery: "not_sent" })

/** @internal */
export const checkSeparator = (separator: unknown): Either.Either<string, InvalidInput> =>
  typeof separator === "string" && namePattern.test(separator)
    ? Either.right(separator)
    : Either.left(invalid("config", "options.separator", "separator must be 1 to 64 of A-Z a-z 0-9 _ . -"))

/** @internal */
export const make = (registry: HostRegistry, separator: string): Gateway => ({
  registry,
  inner: Grants.make(),
  bearers: Grants.make(),
  bundles: new Map(),
  separator,
  lastTools: new Map(),
  closing: false
})

/** @internal */
export const servedName = (gateway: Gateway, entry: string, tool: string): string =>
  `${entry}${gateway.separator}${tool}`

/** C141 */
export const nameIn = (gateway: Gateway, bundle: Bundle, entry: Entry, name: string): string =>
  bundle.bare === undefined ? servedName(gateway, entry.name, name) : name

// C131: a worker name holds no separator, so a served name splits one way only.
const checkedName = (gateway: Gateway, name: string): InvalidInput | undefined =>
  !namePattern.test(name)
    ? invalid("arguments", `workers.${name}`, "a worker name must be 1 to 64 of A-Z a-z 0-9 _ . -")
    : name.includes(gateway.separator)
      ? invalid(
          "arguments",
          `workers.${name}`,
          `a worker name must not hold the separator ${JSON.stringify(gateway.separator)}: two tools could share a name`
        )
      : undefined

const entryOf = (value: unknown, path: string): Either.Either<McpServeFace.ServedWorker, InvalidInput> => {
  if (typeof value === "string") return Either.right({ id: value })
  if (typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string") {
    return Either.right(value as McpServeFace.ServedWorker)
  }
  return Either.left(invalid("arguments", path, "a worker is its id, or { id, tools? }"))
}

const servedOf = (
  gateway: Gateway,
  workers: Readonly<Record<string, string | McpServeFace.ServedWorker>>
): Effect.Effect<ReadonlyArray<[string, McpServeFace.ServedWorker]>, UnknownWorker | InvalidInput> =>
  Effect.gen(function* () {
    if (typeof workers !== "object" || workers === null || Object.keys(workers).length === 0) {
      return yield* invalid("arguments", "workers", "a grant names at least one worker")
    }
    const served: Array<[string, McpServeFace.ServedWorker]> = []
    for (const [name, value] of Object.entries(workers)) {
      const refused = checkedName(gateway, name)
      if (refused !== undefined) return yield* refused
      served.push([name, yield* entryOf(value, `workers.${name}`)])
    }
    for (const [, worker] of served) {
      yield* gateway.registry.service
        .status(worker.id)
        .pipe(Effect.catchTag("HostUnavailable", (error) => Effect.die(error)))
    }
    return served
  })

const sweep = (gateway: Gateway, now: number): void => {
  for (const [key, bundle] of gateway.bundles) {
    if (now <= bundle.expiresAt) continue
    for (const entry of bundle.entries.values()) Grants.revoke(gateway.inner, entry.grant)
    gateway.bundles.delete(key)
  }
  Grants.sweep(gateway.inner, gateway.registry.isOpen, now)
  Grants.sweep(gateway.bearers, (key) => gateway.bundles.has(key), now)
  for (const workerId of gateway.lastTools.keys()) {
    if (!gateway.registry.isOpen(workerId)) gateway.lastTools.delete(workerId)
  }
}

/** C131 @internal */
export const grant = (
  gateway: Gateway,
  workers: Readonly<Record<string, string | McpServeFace.ServedWorker>>,
  options: McpServeFace.ServeGrantOptions | undefined
): Effect.Effect<string, UnknownWorker | InvalidInput> =>
  Effect.gen(function* () {
    const served = yield* servedOf(gateway, workers)
    const unprefixed = options?.unprefixed
    if (unprefixed !== undefined && typeof unprefixed !== "boolean") {
      return yield* invalid("arguments", "options.unprefixed", "unprefixed must be a boolean")
    }
    // C141: only a grant of one worker keeps names unprefixed.
    if (unprefixed === true && served.length !== 1) {
      return yield* invalid("arguments", "options.unprefixed", "unprefixed serves exactly one worker")
    }
    const now = Date.now()
    sweep(gateway, now)
    const key = randomBytes(16).toString("base64url")
    const bearer = yield* Grants.issue(gateway.bearers, key, { operations: [], ttl: options?.ttl }, now)
    const entries = new Map<string, Entry>()
    for (const [name, worker] of served) {
      const issued = Grants.issue(gateway.inner, worker.id, { operations, tools: worker.tools }, now)
      if (Either.isLeft(issued)) {
        for (const entry of entries.values()) Grants.revoke(gateway.inner, entry.grant)
        Grants.revoke(gateway.bearers, bearer)
        return yield* Either.left(reRooted(issued.left, `workers.${name}`))
      }
      entries.set(name, { name, workerId: worker.id, grant: issued.right })
    }
    const expiresAt = Grants.resolve(gateway.bearers, bearer, now)?.expiresAt ?? now
    const bare = unprefixed === true ? [...entries.values()][0] : undefined
    gateway.bundles.set(key, { entries, expiresAt, bare })
    return bearer
  })

const reRooted = (error: InvalidInput, root: string): InvalidInput =>
  invalid("arguments", `${root}.${error.path.replace(/^options\./, "")}`, error.message)

/** `undefined` unless it holds. */
export const bundleOf = (gateway: Gateway, bearer: string): Bundle | undefined => {
  const key = bundleKeyOf(gateway, bearer)
  return key === undefined ? undefined : heldBundle(gateway, key)
}

/** C134: the tag is checked once per session (`heldBundle`). */
export const bundleKeyOf = (gateway: Gateway, bearer: string): string | undefined =>
  Grants.resolve(gateway.bearers, bearer, Date.now())?.workerId

export const heldBundle = (gateway: Gateway, key: string): Bundle | undefined => {
  const bundle = gateway.bundles.get(key)
  return bundle !== undefined && Date.now() <= bundle.expiresAt ? bundle : undefined
}

/** C44 */
export const revoke = (gateway: Gateway, bearer: string): Effect.Effect<void, UnknownWorker> =>
  Effect.suspend(() => {
    const found = Grants.resolve(gateway.bearers, bearer, Date.now())
    const bundle = found === undefined ? undefined : gateway.bundles.get(found.workerId)
    if (found === undefined || bundle === undefined) {
      return Effect.fail(new UnknownWorker({ workerId: bearer, delivery: "not_sent" }))
    }
    for (const entry of bundle.entries.values()) Grants.revoke(gateway.inner, entry.grant)
    Grants.revoke(gateway.bearers, bearer)
    gateway.bundles.delete(found.workerId)
    return Effect.void
  })

export const liveEntries = (gateway: Gateway, bundle: Bundle): ReadonlyArray<[Entry, Grants.Grant]> => {
  const now = Date.now()
  const live: Array<[Entry, Grants.Grant]> = []
  for (const entry of bundle.entries.values()) {
    const found = Grants.resolveOwn(gateway.inner, entry.grant, now)
    if (found !== undefined && gateway.registry.isOpen(entry.workerId)) live.push([entry, found])
  }
  return live
}

export interface Extra {
  readonly onProgress?: ((progress: Operations.Progress) => void) | undefined
  readonly trace?: OwnerProtocol.TraceContext | undefined
  /** C151 */
  readonly ask?: Asker | undefined
}

/** C3, C11: begun once; what it gives ends exactly this request at the server (nothing when it was not begun). */
export const begin = (
  gateway: Gateway,
  entry: Entry,
  name: keyof Operations.Requests,
  params: Record<string, unknown>,
  extra: Extra,
  done: (exit: Exit.Exit<unknown, RequestError>) => void
): (() => void) | undefined => {
  const method = Operations.requests[name].method
  // Params the SDK parsed from JSON, through the gateway's own grants: no tag check nor second parse.
  const listener = { grants: gateway.inner, acceptWorkerIds: false, closing: gateway.closing, ownIds: true }
  const payload = { id: entry.grant, params: JSON.stringify(params) }
  const found = Grants.admitted(listener, name, payload, params as JsonValue.JsonObject)
  if (Either.isLeft(found)) {
    const error = gateway.registry.refusedBefore(entry.workerId, method, "gateway", found.left)
    return void done(Exit.fail(Grants.renamed(error, entry.name)))
  }
  const { grant } = found.right
  let sent: ReturnType<HostRegistry["begin"]> = undefined
  sent = gateway.registry.begin(
    {
      id: entry.workerId,
      method,
      params: payload.params,
      budgetMs: undefined,
      onProgress: extra.onProgress,
      trace: extra.trace,
      ask: extra.ask,
      surface: "gateway"
    },
    (exit) => {
      if (sent !== undefined) grant?.requests.delete(sent.requestId)
      done(
        Exit.isSuccess(exit)
          ? Exit.succeed(Grants.shown(grant, name, exit.value))
          : Exit.mapError(exit, (error) => Grants.renamed(error, entry.name, grant))
      )
    }
  )
  if (sent === undefined) return undefined
  const begun = sent
  grant?.requests.add(begun.requestId)
  return () => void begun.end("interrupted")
}

/** `begin` as an effect: interrupting it ends exactly its request at the server (C11). */
export const request = (
  gateway: Gateway,
  entry: Entry,
  name: keyof Operations.Requests,
  params: Record<string, unknown>,
  extra: Extra = {}
): Effect.Effect<unknown, RequestError> =>
  Effect.async<unknown, RequestError>((resume) => {
    const end = begin(gateway, entry, name, params, extra, resume)
    return end === undefined ? undefined : Effect.sync(end)
  })

/** C8 */
export const listTools = (gateway: Gateway, bundle: Bundle): Effect.Effect<ReadonlyArray<Tool>> =>
  Effect.map(
    Effect.forEach(liveEntries(gateway, bundle), ([entry, grant]) =>
      AgentHost.listAllTools(
        (_id, options) =>
          request(
            gateway,
            entry,
            "listTools",
            options?.cursor === undefined ? {} : { cursor: options.cursor }
          ) as Effect.Effect<{
            readonly tools: ReadonlyArray<Tool>
            readonly nextCursor?: string | undefined
          }>,
        entry.name
      ).pipe(
        Effect.tap((tools) => Effect.sync(() => gateway.lastTools.set(entry.workerId, tools))),
        Effect.orElseSucceed(() => shownLast(gateway, entry, grant)),
        Effect.map((tools) => tools.map((tool) => ({ ...tool, name: nameIn(gateway, bundle, entry, tool.name) })))
      )
    ),
    (lists) => lists.flat()
  )

const shownLast = (gateway: Gateway, entry: Entry, grant: Grants.Grant): ReadonlyArray<Tool> => {
  const last = gateway.lastTools.get(entry.workerId) ?? []
  return (Grants.shown(grant, "listTools", { tools: last }) as { tools: ReadonlyArray<Tool> }).tools
}

export const routeOf = (gateway: Gateway, bundle: Bundle, served: string): [Entry, string] | undefined => {
  if (bundle.bare !== undefined) return [bundle.bare, served]
  const at = served.indexOf(gateway.separator)
  if (at <= 0) return undefined
  const entry = bundle.entries.get(served.slice(0, at))
  return entry === undefined ? undefined : [entry, served.slice(at + gateway.separator.length)]
}

export const unknownTool = (served: string): InvalidInput =>
  invalid("arguments", "name", `this grant serves no tool named ${JSON.stringify(served)}`)

const encodeError = Schema.encodeSync(McpWorkerError)

const codeOf = (error: RequestError): number =>
  error._tag === "ServerError"
    ? error.code
    : error._tag === "InvalidInput" || error._tag === "UnknownWorker"
      ? -32602
      : -32603

/** C132 */
export const mcpErrorOf = (
  error: RequestError
): { readonly code: number; readonly message: string; readonly data: Record<string, unknown> } => ({
  code: codeOf(error),
  message: error.message,
  data: encodeError(error) as unknown as Record<string, unknown>
})
