/** The owner's life: `open` and `close`, in any state. */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Transport,
  type VersionNegotiationMode
} from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CleanupSummary, emptyCleanup, OpenFailed } from "../../McpWorkerError.js"
import type * as Owner from "../../protocol/Owner.js"
import type * as OwnerProtocol from "../../protocol/OwnerProtocol.js"
import * as Redact from "../../Redact.js"
import type * as ServerConfig from "../../ServerConfig.js"
import { displayString } from "../../WorkerStatus.js"
import { defaultMaxInputRounds, maxTimeoutMs } from "../config/normalize.js"
import * as ConfigWire from "../config/wire.js"
import * as ToolFilter from "../toolFilter.js"
import { errorText, OversizedMessage } from "./errors.js"
import { forwardNotifications, listen } from "./notifications.js"
import * as ParamHeaders from "./paramHeaders.js"
import { forwardProgress, onClientError } from "./requests.js"
import { answerServerRequests, capabilitiesOf, interactiveOAuth, rejectServerRequests } from "./serverRequests.js"
import {
  closedFrom,
  type Connection,
  endDirect,
  fail,
  heldBy,
  inflightOf,
  type Machine,
  type Modern,
  State
} from "./state.js"
import { runsTasks } from "./tasks.js"

const clientInfo = { name: "mcp-worker", version: "0.1.0" }

const openFailureStopMs = 2_000

// Long enough for a dying server to exit and flush its stderr.
const exitInfoWaitMs = 1_000

// C90: a legacy stdio server may ignore requests before `initialize`.
const stdioProbeMs = 5_000

// C90: a pinned era has no fallback; over HTTP a probe time-out fails.
const probeMsOf = (config: ServerConfig.ServerConfig, budgetMs: number): number =>
  config._tag === "Stdio" && config.protocol !== "2026-07-28"
    ? Math.max(1, Math.min(stdioProbeMs, Math.floor(budgetMs / 2)))
    : budgetMs

// C90: silence from these usually means the network.
const packageRunners: ReadonlySet<string> = new Set(["npx", "npm", "pnpm", "pnpx", "yarn", "bunx", "uvx", "pipx"])

const negotiationOf = (protocol: "auto" | "legacy" | "2026-07-28" | undefined): VersionNegotiationMode =>
  protocol === "legacy" ? "legacy" : protocol === "2026-07-28" ? { pin: "2026-07-28" } : "auto"

/** @internal */
export const open = (
  machine: Machine,
  factory: Owner.TransportFactory,
  request: OwnerProtocol.Open
): Effect.Effect<OwnerProtocol.OpenInfo, OpenFailed> =>
  Effect.gen(function* () {
    const { workerId } = request
    machine.state = State.Opening({ workerId, transport: undefined, client: undefined })
    // The host validated the config already.
    const config = yield* Effect.mapError(
      ConfigWire.fromWire(request.config),
      (error) => new OpenFailed({ stage: "thread", message: error.message })
    )
    const configured = ConfigWire.secretsOf(config)
    const transport = yield* factory(config, {
      workerId,
      marker: request.marker,
      onSpawned: (pid) => machine.port.post({ _tag: "Spawned", pid }),
      oauth: request.oauth === undefined ? undefined : interactiveOAuth(machine, request.oauth)
    })
    machine.state = State.Opening({ workerId, transport, client: undefined })
    const handlers = request.handlers ?? []
    const budgetMs = Math.min(request.timeoutMs, maxTimeoutMs)
    const capabilities = capabilitiesOf(handlers)
    const client = new Client(clientInfo, {
      capabilities,
      // C51: over this connection, so the server starts once.
      versionNegotiation: {
        mode: negotiationOf(config.protocol),
        // The budget's bound, not the SDK's 60 s timeout.
        probe: { timeoutMs: probeMsOf(config, budgetMs) }
      },
      // C53
      inputRequired: { maxRounds: maxInputRoundsOf(config) }
    })
    answerServerRequests(machine, client, handlers)
    forwardNotifications(machine, client)
    machine.state = State.Opening({ workerId, transport, client })
    const secrets = transport.secrets ?? (() => configured)
    const started = Date.now()
    const handshake = watchHandshake(transport)
    yield* Effect.tryPromise({
      try: () => connect(client, transport, budgetMs),
      catch: (error) => error
    }).pipe(
      Effect.ensuring(Effect.sync(handshake.stop)),
      Effect.catchAll((error) =>
        openFailure(transport, secrets, error, {
          elapsedMs: Date.now() - started,
          waitingFor: handshake.waitingFor(),
          command: config._tag === "Stdio" ? config.command : undefined
        })
      )
    )
    const era = client.getProtocolEra() ?? null
    const modern = era === "modern" ? modernOf(client, transport, capabilities, maxInputRoundsOf(config)) : undefined
    const connection: Connection = {
      workerId,
      secrets,
      transport,
      client,
      inflight: new Map(),
      progress: new Map(),
      idle: new Map(),
      modern,
      spill: request.spill,
      tools: request.tools === undefined ? undefined : ToolFilter.compile(request.tools),
      taskSupport: new Map()
    }
    client.onclose = () => fail(machine, "transport", "the connection closed")
    client.onerror = (error: Error) => onClientError(machine, connection, error)
    forwardProgress(machine, connection)
    machine.state = State.Ready({ connection })
    if (modern !== undefined) listen(connection, modern)
    const server = client.getServerVersion()
    return {
      pid: transport.pid,
      era,
      protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
      server: server ? { name: displayString(server.name), version: displayString(server.version) } : null,
      tasks: runsTasks(client, modern !== undefined),
      serves: servesOf(client.getServerCapabilities())
    }
  }).pipe(
    // C4: on interruption too.
    Effect.onError(() =>
      Effect.suspend(() => {
        const { transport } = heldBy(machine.state)
        machine.state = closedFrom(machine.state)
        return transport === undefined ? Effect.void : transport.stop(openFailureStopMs)
      })
    )
  )

type Declared = Record<string, unknown> | undefined

/** C161 */
const servesOf = (capabilities: Declared): NonNullable<OwnerProtocol.OpenInfo["serves"]> => {
  const member = (name: string): Declared => {
    const value = capabilities?.[name]
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
  }
  const flag = (declared: Declared, name: string) => (declared?.[name] === true ? { [name]: true } : {})
  const tools = member("tools")
  const resources = member("resources")
  const prompts = member("prompts")
  return {
    ...(tools && { tools: flag(tools, "listChanged") }),
    ...(resources && { resources: { ...flag(resources, "subscribe"), ...flag(resources, "listChanged") } }),
    ...(prompts && { prompts: flag(prompts, "listChanged") }),
    ...(member("completions") && { completions: {} })
  }
}

// C65: the transport's report ends the wait. C90: one shared budget.
const connect = (client: Client, transport: Owner.OwnerTransport, budgetMs: number): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(
      () => reject(new SdkError(SdkErrorCode.RequestTimeout, "the open's budget ran out", { timeout: budgetMs })),
      budgetMs
    )
    client.onerror = (error: Error) => {
      if (error instanceof OversizedMessage) reject(error)
    }
    client
      .connect(transport.transport, { timeout: budgetMs })
      .then(resolve, reject)
      .finally(() => clearTimeout(deadline))
  })

/** C90: a failed open says what it waited for; C95: the era probe is the owner's own request. */
const watchHandshake = (owner: Owner.OwnerTransport) => {
  const transport: Transport = owner.transport
  let waitingFor: string | undefined
  let release: (() => void) | undefined
  const own = Object.prototype.hasOwnProperty.call(transport, "send")
  const send = transport.send
  transport.send = (message, options) => {
    if ("method" in message && "id" in message) {
      waitingFor = message.method
      release?.()
      release = message.method === "server/discover" ? owner.ownRequest?.("server/discover") : undefined
    }
    return send.call(transport, message, options)
  }
  return {
    waitingFor: () => waitingFor,
    stop: () => {
      release?.()
      if (own) transport.send = send
      else Reflect.deleteProperty(transport, "send")
    }
  }
}

interface OpenAttempt {
  readonly elapsedMs: number
  readonly waitingFor: string | undefined
  readonly command: string | undefined
}

// C90
const timeoutMessage = (attempt: OpenAttempt, stderrTail: string | undefined): string => {
  const within = `within ${attempt.elapsedMs} ms, what was left of the open's budget once the server had started`
  const waited =
    attempt.waitingFor === "server/discover"
      ? `the server did not answer server/discover (the era probe) ${within}`
      : `the server did not complete initialize ${within}`
  const runner = attempt.command === undefined ? undefined : commandName(attempt.command)
  if (runner === undefined || !packageRunners.has(runner) || (stderrTail ?? "").length > 0) return waited
  return (
    `${waited}; ${runner} printed nothing: it may be waiting on the network (a proxy or a custom CA). The proxy and ` +
    `CA variables are passed to the server by default; pass any other variable it needs with envFrom`
  )
}

const commandName = (command: string): string =>
  (command.split(/[\\/]/).pop() ?? command).replace(/\.(cmd|exe|bat)$/i, "").toLowerCase()

// C53
const maxInputRoundsOf = (config: ServerConfig.ServerConfig): number => config.maxInputRounds ?? defaultMaxInputRounds

// C124
const modernOf = (
  client: Client,
  transport: Owner.OwnerTransport,
  clientCapabilities: Record<string, unknown>,
  maxInputRounds: number
): Modern => ({
  subscribed: new Set<string>(),
  listening: undefined,
  params: carriesHeaders(transport) ? ParamHeaders.makeKnown() : undefined,
  framing: { protocolVersion: client.getNegotiatedProtocolVersion() ?? "", clientInfo, clientCapabilities },
  maxInputRounds
})

// C62: one POST per request, to carry `Mcp-Param-*` headers.
const carriesHeaders = (transport: Owner.OwnerTransport): boolean => transport.transport.hasPerRequestStream === true

const isNegotiationError = (error: unknown): boolean =>
  error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed

// C28
const openFailure = (
  transport: Owner.OwnerTransport,
  secrets: () => ReadonlyArray<string>,
  error: unknown,
  attempt: OpenAttempt
) =>
  Effect.gen(function* () {
    // C51, C28: the transport's own error says what happened.
    for (let i = 0; i < 3 && isNegotiationError(error); i++) {
      const cause = (error as Error).cause
      if (cause === undefined) break
      error = cause
    }
    if (error instanceof OversizedMessage) {
      return yield* new OpenFailed({
        stage: "initialize",
        message:
          error.ownRequest === undefined
            ? `a message from the server during initialize passed maxResultBytes (${error.bytes} > ${error.limit} bytes)`
            : `a message from the server during ${error.ownRequest} (the era probe) passed the owner's bound for its ` +
              `own requests (${error.bytes} > ${error.limit} bytes)`
      })
    }
    const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout
    const info = yield* transport.exitInfo(timedOut ? 0 : exitInfoWaitMs)
    const exited = info.exitCode !== undefined || info.signal !== undefined
    const waitedForUser = timedOut && transport.waitingForUser?.() === true
    const stage = waitedForUser
      ? "authorization"
      : timedOut
        ? "timeout"
        : transport.classify?.(error) === "unauthorized"
          ? "authorization"
          : exited || error instanceof ProtocolError || isNegotiationError(error)
            ? "initialize"
            : "connect"
    const message = waitedForUser
      ? `the user's authorization did not come within ${attempt.elapsedMs} ms`
      : timedOut
        ? timeoutMessage(attempt, info.stderrTail)
        : exited
          ? `the server exited before completing initialize (${info.signal ?? `code ${info.exitCode}`})`
          : Redact.redact(errorText(error), secrets())
    return yield* new OpenFailed({
      stage,
      message,
      ...(info.exitCode !== undefined ? { exitCode: info.exitCode } : {}),
      ...(info.signal !== undefined ? { signal: info.signal } : {}),
      ...(info.stderrTail !== undefined && info.stderrTail.length > 0 ? { stderrTail: info.stderrTail } : {})
    })
  })

/** @internal */
export const close = (machine: Machine, budgetMs: number): Effect.Effect<CleanupSummary> =>
  Effect.gen(function* () {
    rejectServerRequests(machine)
    // A direct request is answered here, not by the host.
    if (machine.direct !== undefined) endDirect(machine, machine.direct.requestId, "interrupted")
    const previous = machine.state
    const { client, transport } = heldBy(previous)
    machine.state = closedFrom(previous)
    const inflight = inflightOf(previous)
    if (inflight !== undefined) {
      for (const controller of inflight.values()) controller.abort("interrupted")
      inflight.clear()
    }
    const started = Date.now()
    if (client !== undefined) {
      client.onclose = () => {}
      client.onerror = () => {}
      yield* Effect.promise(() => client.close()).pipe(
        Effect.timeoutOption(Math.max(1, Math.floor(budgetMs / 2))),
        Effect.catchAllCause(() => Effect.succeed(Option.none()))
      )
    }
    if (transport === undefined) return emptyCleanup
    const left = Math.max(1, budgetMs - (Date.now() - started))
    return yield* transport.stop(left)
  })
