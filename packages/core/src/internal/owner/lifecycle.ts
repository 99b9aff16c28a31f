/**
 * The owner's life: `open` builds the transport and the client and completes initialize, leaving nothing running
 * when it fails (C4); `close` ends whatever the state holds, within its budget, in any state.
 */
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
import { forwardNotifications, forwardProgress, listen } from "./notifications.js"
import * as ParamHeaders from "./paramHeaders.js"
import { onClientError } from "./requests.js"
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

// How long a failed open waits for a server that is going away to exit and flush its stderr.
const exitInfoWaitMs = 1_000

// How long a stdio server may stay silent on `server/discover` under `auto` before it counts as a legacy server that
// ignores requests before `initialize` (the SDK then sends `initialize`); at most half the open budget (C90).
const stdioProbeMs = 5_000

// C90: a pinned era has no fallback, so its probe gets the whole budget; over HTTP a probe time-out is a failure, so
// it gets the whole budget too. Either way the open as a whole ends at the budget.
const probeMsOf = (config: ServerConfig.ServerConfig, budgetMs: number): number =>
  config._tag === "Stdio" && config.protocol !== "2026-07-28"
    ? Math.max(1, Math.min(stdioProbeMs, Math.floor(budgetMs / 2)))
    : budgetMs

// Commands that fetch a package before the server starts: silence from them usually means the network (C90).
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
    // The host validated the config already; a broken wire form is a protocol fault of the host.
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
      // Either era, as the config says (C51): the probe goes over this connection, whose server starts once.
      versionNegotiation: {
        mode: negotiationOf(config.protocol),
        // The probe is bounded by the budget (the SDK's own default would be its 60 s request timeout).
        probe: { timeoutMs: probeMsOf(config, budgetMs) }
      },
      // The rounds of one call are bounded; past them the call fails with InputRoundsExceeded (C53).
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
    // On failure and on interruption alike (the host gives up on an open that outlives its budget): a failed open
    // leaves nothing running (C4), and nothing that keeps this thread alive; the host re-scans once it is gone.
    Effect.onError(() =>
      Effect.suspend(() => {
        const { transport } = heldBy(machine.state)
        machine.state = closedFrom(machine.state)
        return transport === undefined ? Effect.void : transport.stop(openFailureStopMs)
      })
    )
  )

type Declared = Record<string, unknown> | undefined

/** C161: what the server declares of what a gateway re-serves, as booleans whatever the server sent. */
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

// A message past `maxResultBytes` during the handshake (its answer, in practice) is skipped by the transport, so the
// handshake could only wait out its budget: the transport's report ends it at once, naming the limit (C65).
// The probe and initialize share one budget (C90): a fallback to initialize gets what the probe left, not a fresh one.
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

/**
 * Records the method of the last request sent during the handshake, so that a failed open can say what it waited for
 * (the era probe or initialize, C90), and holds the era probe in flight as the owner's own request, bounded as such
 * (C95); `stop` puts the transport's own `send` back.
 */
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

/** What a failed open knows besides its error. */
interface OpenAttempt {
  readonly elapsedMs: number
  /** The method of the last request sent: `server/discover` (the era probe) or `initialize`. */
  readonly waitingFor: string | undefined
  /** A stdio server's command. */
  readonly command: string | undefined
}

// C90: what a time-out waited for, and the likely cause when a package runner printed nothing at all.
const timeoutMessage = (attempt: OpenAttempt, stderrTail: string | undefined): string => {
  // The owner's part of the budget: what the open had left once the server process had started.
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

// Streamable HTTP, one POST per request: the transport whose requests can carry `Mcp-Param-*` headers (C62).
// C53: the rounds of one call, the SDK's and a task start's alike.
const maxInputRoundsOf = (config: ServerConfig.ServerConfig): number => config.maxInputRounds ?? defaultMaxInputRounds

// A modern connection's own state; the envelope is what the client puts on its requests, for those the tasks
// extension sends beside it (C124).
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

const carriesHeaders = (transport: Owner.OwnerTransport): boolean => transport.transport.hasPerRequestStream === true

const isNegotiationError = (error: unknown): boolean =>
  error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed

// Why initialize did not complete. A server that went away is given a moment to finish exiting, so that its exit
// status and last stderr lines are reported however early it died (C28).
const openFailure = (
  transport: Owner.OwnerTransport,
  secrets: () => ReadonlyArray<string>,
  error: unknown,
  attempt: OpenAttempt
) =>
  Effect.gen(function* () {
    // A probe that failed on the transport: the transport's own error says what happened (C51, C28).
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
    // A remote caller's request this owner took directly is answered here; the host answers its own.
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
