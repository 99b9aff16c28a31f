// The core `Owner` in the calling thread, this record playing the host's part with the same messages, so the host's
// rules hold unchanged (C8, C9, C10–C12, C15, C19, C27).
import {
  type CleanupSummary,
  CloseFailed,
  emptyCleanup,
  type FailureKind,
  InvalidInput,
  OpenFailed
} from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Owner from "@mcp-worker/core/protocol/Owner"
import * as OwnerProtocol from "@mcp-worker/core/protocol/OwnerProtocol"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as ToolFilter from "@mcp-worker/core/ToolFilter"
import * as WorkerId from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { Options as McpClientOptions } from "../../McpClient.js"
import type { Handlers, OAuthProvider } from "../../NodeMcpWorkers.js"
import type * as ProcessJobFace from "../../ProcessJob.js"
import * as ProcessJob from "../job/processJob.js"
import * as Budget from "../shared/budget.js"
import * as ServerRequests from "../host/serverRequests.js"
import * as Reaper from "../host/reaper.js"
import { makeFactory } from "../transport/factory.js"
import * as Connection from "../shared/connection.js"
import { settle } from "../shared/connection.js"

/** @internal */
export type Options = McpClientOptions

/** @internal */
export interface Client extends Connection.Connection {
  readonly workerId: WorkerId.WorkerId
  readonly defaultTimeoutMs: number
  readonly closeMs: number
  readonly handlers: Handlers
  readonly oauth: { readonly provider: OAuthProvider; readonly settings: string } | undefined
  readonly owner: Owner.Owner
  readonly reaper: Reaper.Reaper
  readonly cleanupScan: ProcessJobFace.CleanupScanService
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly requestIdStem: string
  requestCount: number
}

const isProxy = Connection.isProxy

const noThread = { threadId: null, ownerPid: null }

// Its work is only at the process's death, so one shell lives as long as the process rather than one per scope.
const sharedReaper: () => Reaper.Reaper = () =>
  globalValue(Symbol.for("@mcp-worker/node/McpClient/reaper"), () =>
    Effect.runSync(Effect.flatMap(Scope.make(), (scope) => Scope.extend(Reaper.make, scope)))
  )

/** @internal */
export const statusOf = (client: Client): WorkerStatus => Connection.statusOf(client, noThread)

const markFailed = (client: Client, kind: FailureKind, message: string, at?: string) => {
  Connection.markFailed(client, kind, message, at)
}

const countNotification = (client: Client, method: OwnerProtocol.NotificationMethod) => {
  client.notifications.received++
  const list = ServerRequests.listOf(method)
  if (list !== undefined) client.notifications.listChanged[list] = new Date().toISOString()
}

const onOwnerMessage = (client: Client, raw: OwnerProtocol.OwnerMessageEncoded): void => {
  const message = Connection.onOwnerMessage(client, raw, client, markFailed)
  switch (message?._tag) {
    case "ServerRequest":
      return ServerRequests.answer(
        {
          workerId: client.workerId,
          handlers: client.handlers,
          oauth: client.oauth?.provider,
          timeoutMs: client.defaultTimeoutMs,
          reply: (answer) => client.owner.onMessage(answer),
          runFork: client.runFork
        },
        message
      )
    case "Notification":
      return countNotification(client, message.method)
  }
}

// C19
const confirmGone = (client: Client, budgetMs?: number): Effect.Effect<CleanupSummary> =>
  Connection.confirmGone(client, client.cleanupScan, client.reaper, budgetMs)

const closeClient = (client: Client, budgetMs: number): Effect.Effect<WorkerStatus, CloseFailed> =>
  Effect.gen(function* () {
    const started = Date.now()
    const running = yield* Budget.start(budgetMs)
    // C22a: it was sent, and close cannot know its outcome.
    client.pending?.unknown("interrupted")
    // `close` is uninterruptible, so a cleanup never stops half way; this step is made interruptible for its timeout.
    const left = yield* Budget.left(running)
    const summary = yield* client.owner
      .close(Math.floor(left * 0.8))
      .pipe(Effect.interruptible, Effect.timeout(left), Effect.option, Effect.map(Option.getOrUndefined))
    // C19: re-scanned, whatever the owner said.
    const cleanup = client.http
      ? (summary ?? emptyCleanup)
      : ServerRequests.mergedCleanup(yield* confirmGone(client, yield* Budget.left(running)), summary, started)
    if (cleanup.activeProcesses > 0) {
      markFailed(client, "closing", "close could not confirm that every process of the client ended")
      Connection.recordCleanup(client, cleanup)
      return yield* new CloseFailed({
        workerId: client.workerId,
        message: `${cleanup.activeProcesses} process(es) of the client are still alive; call close again`,
        cleanup
      })
    }
    Connection.closed(client, cleanup)
    return statusOf(client)
  })

/** @internal */
export const close = (client: Client, budgetMs?: number): Effect.Effect<WorkerStatus, CloseFailed> =>
  Effect.suspend(() => {
    if (client.life._tag === "Closing") return Deferred.await(client.life.done)
    const closing = Deferred.unsafeMake<WorkerStatus, CloseFailed>(FiberId.none)
    // An open that failed has cleaned up already.
    if (Connection.beginClose(client, closing) === undefined) return Effect.succeed(statusOf(client))
    return closeClient(client, budgetMs ?? client.closeMs).pipe(
      Effect.onExit((exit) =>
        Effect.sync(() => Connection.endClose(client)).pipe(Effect.zipRight(Deferred.done(closing, exit)))
      ),
      Effect.uninterruptible
    )
  }).pipe(Effect.withSpan("McpClient.close", { attributes: { workerId: client.workerId } }))

const defaultsOf = (config: ServerConfig.ServerConfig, options: Options) =>
  Effect.gen(function* () {
    const budget = (name: "timeout" | "requestTimeout" | "closeTimeout") =>
      Either.mapLeft(
        Budget.budgetOf(options[name]),
        (message) =>
          new InvalidInput({
            where: "config",
            path: `options.${name}`,
            message,
            delivery: "not_sent"
          })
      )
    const limit = options.maxResultBytes
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0 && limit <= ServerConfig.maxMaxResultBytes)) {
      return yield* new InvalidInput({
        where: "config",
        path: "options.maxResultBytes",
        message: `must be a whole number from 1 to ${ServerConfig.maxMaxResultBytes}`,
        delivery: "not_sent"
      })
    }
    const tools = yield* ToolFilter.check(options.tools)
    const requestMs = (yield* budget("requestTimeout")) ?? McpWorkers.defaultRequestTimeoutMs
    return {
      openMs: (yield* budget("timeout")) ?? config.timeoutMs ?? requestMs,
      requestMs: config.timeoutMs ?? requestMs,
      closeMs: (yield* budget("closeTimeout")) ?? McpWorkers.defaultCloseTimeoutMs,
      tools,
      wire: ServerConfig.toWire(
        config.maxResultBytes === undefined && limit !== undefined ? { ...config, maxResultBytes: limit } : config
      )
    }
  })

// C4: whatever the server started ends, even if the owner could not end it.
const abandon = (client: Client) =>
  Effect.gen(function* () {
    Connection.closed(client, null)
    if (client.http) return
    const left = yield* confirmGone(client)
    Connection.closed(client, left)
    if (left.activeProcesses > 0) {
      yield* Effect.logError("processes of a failed open are still alive").pipe(
        Effect.annotateLogs({ workerId: client.workerId, activeProcesses: left.activeProcesses })
      )
    }
  })

/** @internal */
export const make = (
  input: unknown,
  options: Options = {}
): Effect.Effect<Client, OpenFailed | InvalidInput, Scope.Scope> =>
  Effect.gen(function* () {
    const started = Date.now()
    const config = yield* ServerConfig.normalize(input, process.env, { isProxy })
    const defaults = yield* defaultsOf(config, options)
    const factory = makeFactory(undefined)
    const client: Client = {
      workerId: WorkerId.make(),
      marker: WorkerId.make(),
      http: config._tag === "Http",
      defaultTimeoutMs: defaults.requestMs,
      closeMs: defaults.closeMs,
      handlers: options.handlers ?? {},
      oauth: yield* Effect.orDie(ServerRequests.oauthSettings(options.oauth, "McpClient.make")),
      // Set at once below: the owner posts to the record it is part of.
      owner: undefined as unknown as Owner.Owner,
      reaper: sharedReaper(),
      cleanupScan: yield* ProcessJob.CleanupScan,
      runFork: yield* FiberSet.makeRuntime<never>(),
      requestIdStem: WorkerId.makeRequestId().slice(0, 16),
      requestCount: 0,
      life: Connection.opening,
      pending: undefined,
      pid: null,
      era: null,
      protocolVersion: null,
      server: null,
      notifications: Connection.counters()
    }
    ;(client as { owner: Owner.Owner }).owner = Owner.make({
      port: {
        post: (message) => onOwnerMessage(client, message),
        postResult: (requestId, result) => settle(client, requestId, Exit.succeed(result))
      },
      factory: factory.make
    })
    // C27: before the server starts.
    if (!client.http) {
      client.reaper.watch(client.marker)
      yield* Connection.exitHook(() => [client])
    }
    // Before the open runs, so an interruption at any point still ends up here.
    yield* Effect.addFinalizer(() =>
      close(client).pipe(
        Effect.catchAll((error) =>
          Effect.logError("the client could not be closed").pipe(
            Effect.annotateLogs({ workerId: client.workerId, activeProcesses: error.cleanup.activeProcesses })
          )
        )
      )
    )
    const info = yield* client.owner
      .open(
        new OwnerProtocol.Open({
          workerId: client.workerId,
          marker: client.marker,
          config: defaults.wire,
          timeoutMs: Math.max(1, defaults.openMs - (Date.now() - started)),
          handlers: Connection.handlerNames(client.handlers),
          ...(client.oauth !== undefined ? { oauth: client.oauth.settings } : {}),
          ...(defaults.tools !== undefined ? { tools: defaults.tools } : {})
        })
      )
      .pipe(
        // The owner bounds initialize and says why; this only catches a stuck spawn.
        Effect.timeoutFail({
          duration: defaults.openMs + 1_000,
          onTimeout: () =>
            new OpenFailed({ stage: "timeout", message: `the client did not open within ${defaults.openMs} ms` })
        }),
        // C4: on the caller's interruption too.
        Effect.onError(() => abandon(client))
      )
    client.pid = info.pid
    client.era = info.era
    client.protocolVersion = info.protocolVersion
    client.server = info.server
    client.life = Connection.ready
    return client
  }).pipe(Effect.withSpan("McpClient.open"))

/** Close has no InvalidInput to report: an unusable budget falls back to the client's own. @internal */
export const closeBudgetOf = (timeout: Duration.DurationInput | undefined): number | undefined =>
  Either.getOrUndefined(Budget.budgetOf(timeout))
