/**
 * The remote side of `McpWorkers`: any thread of the process reaches the host registry (`NodeMcpWorkers.layer`,
 * built in some other thread or in this one) by worker id, over the protocol in `remoteProtocol.ts`.
 *
 * Cost of a call: one message to the host, one back. Nothing else runs on the hot path: the remote asks the host
 * to acknowledge a request only when it has not heard from a host lately, and only then arms the no-answer timer
 * that turns a missing host into `HostUnavailable` (C22). While calls are in flight it pings a silent host every
 * `staleAfterMs`, which also tells the host that this thread is still waiting.
 *
 * @internal
 */
import * as JsonValue from "@mcp-worker/core/JsonValue"
import {
  HostUnavailable,
  InvalidInput,
  type McpWorkerError,
  type RequestError,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as ServerConfig from "@mcp-worker/core/ServerConfig"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { types } from "node:util"
import { BroadcastChannel } from "node:worker_threads"
import * as Protocol from "./remoteProtocol.js"
import { traced } from "./traced.js"

/**
 * Options of a remote request: the `McpWorkers` options plus a caller-local `AbortSignal` (the Promise facade).
 * Aborting it asks the host to interrupt exactly that call and to answer `DeliveryUnknown{reason: "interrupted"}`.
 *
 * @internal
 */
export interface RemoteRequestOptions extends McpWorkers.RequestOptions {
  readonly signal?: AbortSignal | undefined
}

/**
 * `McpWorkers` served by the host of this process, with `signal` on the two requests.
 *
 * @internal
 */
export interface RemoteService extends McpWorkers.McpWorkersService {
  readonly listTools: (
    id: string,
    options?: RemoteRequestOptions & { readonly cursor?: string | undefined }
  ) => Effect.Effect<McpWorkers.ListToolsResult, RequestError>
  readonly callTool: (
    id: string,
    name: string,
    args?: JsonValue.JsonObject,
    options?: RemoteRequestOptions
  ) => Effect.Effect<McpWorkers.CallToolResult, RequestError>
}

interface Pending {
  readonly operation: Protocol.Operation
  readonly resume: (exit: Exit.Exit<unknown, McpWorkerError>) => void
}

const isProxy = (u: unknown) => types.isProxy(u)

// Remote spans say so; like the host's, they are only opened when a real tracer is installed.
const span = (name: string, attributes: Record<string, unknown>) => traced(name, { ...attributes, remote: true })

const noHost = (withinMs: number) =>
  new HostUnavailable({
    message:
      `no mcp-worker host answered within ${withinMs} ms: build NodeMcpWorkers.layer in some thread of ` +
      "this process (normally the main thread) before using NodeMcpWorkers.layerRemote or makePromiseClient"
  })

/** What a call gets once the host it talked to has closed: its workers were closed with it. */
const afterHostClosed = (operation: Protocol.Operation): McpWorkerError =>
  operation._tag === "Open"
    ? new HostUnavailable({
        message: "the mcp-worker host of this process has closed: build NodeMcpWorkers.layer again to open workers"
      })
    : new UnknownWorker({ workerId: operation.workerId })

const invalidOption = (path: string, message: string) =>
  new InvalidInput({ where: "arguments", path, message, delivery: "not_sent" })

/** A duration option in milliseconds, for the host's timer (which holds at most 2^31 - 1 ms). */
const millis = (input: unknown, path: string): Either.Either<number | undefined, InvalidInput> => {
  if (input === undefined) return Either.right(undefined)
  return Option.match(Duration.decodeUnknown(input), {
    onNone: () => Either.left(invalidOption(path, 'is not a duration (milliseconds, or a string such as "5 seconds")')),
    onSome: (duration) => Either.right(Math.min(Duration.toMillis(duration), ServerConfig.maxTimeoutMs))
  })
}

/**
 * Builds a remote client in the current scope. Its channels never keep the thread alive while no call is in
 * flight, and are closed with the scope.
 *
 * @internal
 */
export const make: Effect.Effect<RemoteService, never, Scope.Scope> = Effect.gen(function* () {
  const from = Protocol.replyChannel(Protocol.randomId())
  const pending = new Map<number, Pending>()
  let nextCallId = 0
  let lastHeard = Number.NEGATIVE_INFINITY
  let probeSentAt: number | undefined
  let probeWithinMs: number = Protocol.ackWithinMs
  let knownHost: string | undefined
  let hostGone = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let timerAt = Number.POSITIVE_INFINITY

  // A fresh instance per message, closed at once: a remote holding a `host` instance would receive every other
  // remote's requests too (a BroadcastChannel delivers to all instances of its name but the sender).
  const post = (message: Protocol.RemoteMessageEncoded) => {
    const channel = new BroadcastChannel(Protocol.hostChannel)
    channel.postMessage(message)
    channel.close()
  }

  const replies = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const channel = new BroadcastChannel(from)
      channel.unref()
      return channel
    }),
    (channel) =>
      Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        timer = undefined
        const left = Array.from(pending.entries())
        pending.clear()
        for (const [callId, call] of left) {
          post({ _tag: "Interrupt", from, callId, reply: false })
          call.resume(Exit.interrupt(FiberId.none))
        }
        channel.close()
      })
  )

  const settle = (callId: number, exit: Exit.Exit<unknown, McpWorkerError>) => {
    const call = pending.get(callId)
    if (call === undefined) return
    pending.delete(callId)
    if (pending.size === 0) replies.unref()
    call.resume(exit)
  }

  /** Ends every call in flight with `error`, and tells a host that may still be running them to stop. */
  const failAll = (error: (operation: Protocol.Operation) => McpWorkerError) => {
    for (const [callId, call] of Array.from(pending.entries())) {
      post({ _tag: "Interrupt", from, callId, reply: false })
      settle(callId, Exit.fail(error(call.operation)))
    }
  }

  const heard = () => {
    lastHeard = Date.now()
    probeSentAt = undefined
  }

  // One timer at most, re-armed only when an earlier check is needed: a steady stream of calls arms it about
  // once per `staleAfterMs`, not once per call.
  const arm = () => {
    const at =
      probeSentAt !== undefined
        ? probeSentAt + probeWithinMs
        : pending.size > 0
          ? lastHeard + Protocol.staleAfterMs
          : undefined
    if (at === undefined || (timer !== undefined && timerAt <= at)) return
    if (timer !== undefined) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(check, Math.max(0, at - Date.now()) + 1)
    timer.unref()
  }

  const check = () => {
    timer = undefined
    timerAt = Number.POSITIVE_INFINITY
    const now = Date.now()
    if (probeSentAt !== undefined) {
      if (now - probeSentAt >= probeWithinMs) {
        probeSentAt = undefined
        failAll(() => noHost(probeWithinMs))
      }
    } else if (pending.size > 0 && now - lastHeard >= Protocol.staleAfterMs) {
      probeSentAt = now
      probeWithinMs = Protocol.pingAckWithinMs
      post({ _tag: "Ping", from })
    }
    arm()
  }

  replies.onmessage = (event) => {
    const decoded = Protocol.decodeReply(event.data)
    if (Either.isLeft(decoded)) return
    heard()
    const reply = decoded.right
    switch (reply._tag) {
      case "Ack":
        knownHost = reply.hostId
        hostGone = false
        return
      case "Success":
        return settle(reply.callId, Exit.succeed(reply.value))
      case "Failure":
        return settle(reply.callId, Exit.fail(reply.error))
      case "Defect":
        return settle(reply.callId, Exit.die(new Error(reply.message)))
    }
  }

  const announcements = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const channel = new BroadcastChannel(Protocol.announceChannel)
      channel.unref()
      return channel
    }),
    (channel) => Effect.sync(() => channel.close())
  )
  announcements.onmessage = (event) => {
    const decoded = Protocol.decodeAnnouncement(event.data)
    if (Either.isLeft(decoded)) return
    const announcement = decoded.right
    if (announcement._tag === "Up") {
      knownHost = announcement.hostId
      hostGone = false
      heard()
      return
    }
    // Another host's `Gone` (a second host in the process, on standby) says nothing about ours.
    if (knownHost !== undefined && announcement.hostId !== knownHost) return
    knownHost = undefined
    hostGone = true
    // The host answered every call it ran before announcing; those answers travel on the reply channel and are
    // read in this same turn of the event loop, so whatever is still pending after it was never going to be.
    setImmediate(() => {
      if (hostGone) failAll(afterHostClosed)
    })
  }

  const send = (operation: Protocol.Operation, signal?: AbortSignal): Effect.Effect<unknown, McpWorkerError> =>
    Effect.async<unknown, McpWorkerError>((resume) => {
      if (hostGone) return resume(Exit.fail(afterHostClosed(operation)))
      const callId = ++nextCallId
      const now = Date.now()
      const ack = probeSentAt === undefined && now - lastHeard > Protocol.staleAfterMs
      if (ack) {
        probeSentAt = now
        probeWithinMs = Protocol.ackWithinMs
      }
      const onAbort = () => {
        if (pending.has(callId)) post({ _tag: "Interrupt", from, callId, reply: true })
      }
      pending.set(callId, {
        operation,
        resume: (exit) => {
          signal?.removeEventListener("abort", onAbort)
          resume(exit)
        }
      })
      if (pending.size === 1) replies.ref()
      post({ _tag: "Request", from, callId, ack, operation })
      arm()
      signal?.addEventListener("abort", onAbort, { once: true })
      return Effect.sync(() => {
        signal?.removeEventListener("abort", onAbort)
        if (!pending.delete(callId)) return
        if (pending.size === 0) replies.unref()
        post({ _tag: "Interrupt", from, callId, reply: false })
      })
    })

  // Everything is validated here, in the calling thread, so that only plain data in the protocol's shape is ever
  // posted: the host drops a message it cannot read.
  const checkId = (id: unknown): Either.Either<string, UnknownWorker> =>
    typeof id === "string" ? Either.right(id) : Either.left(new UnknownWorker({ workerId: String(id) }))

  const open: McpWorkers.McpWorkersService["open"] = (input, options) =>
    Effect.suspend(() =>
      Either.all([ServerConfig.normalize(input, process.env, { isProxy }), millis(options?.timeout, "timeout")]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([config, timeoutMs]) =>
            send({ _tag: "Open", config: ServerConfig.toWire(config), timeoutMs }) as Effect.Effect<
              WorkerId,
              McpWorkerError
            >
        })
      )
    ).pipe(span("McpWorkers.open", {})) as ReturnType<McpWorkers.McpWorkersService["open"]>

  const listTools: RemoteService["listTools"] = (id, options) =>
    Effect.suspend(() => {
      const cursor = options?.cursor
      if (cursor !== undefined && typeof cursor !== "string") {
        return Effect.fail(invalidOption("cursor", "the cursor must be a string"))
      }
      return Either.all([checkId(id), millis(options?.timeout, "timeout")]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([workerId, timeoutMs]) => send({ _tag: "ListTools", workerId, cursor, timeoutMs }, options?.signal)
        })
      )
    }).pipe(span("McpWorkers.listTools", { workerId: id })) as Effect.Effect<McpWorkers.ListToolsResult, RequestError>

  const callTool: RemoteService["callTool"] = (id, name, args, options) =>
    Effect.suspend(() => {
      if (typeof name !== "string" || name.length === 0) {
        return Effect.fail(invalidOption("name", "the tool name must be a non-empty string"))
      }
      if (args !== undefined && !JsonValue.isJsonObject(args)) {
        return Effect.fail(invalidOption("args", "tool arguments must be a plain object"))
      }
      return Either.all([
        checkId(id),
        JsonValue.encode(args ?? {}, { where: "arguments", root: "args", isProxy }),
        millis(options?.timeout, "timeout")
      ]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([workerId, text, timeoutMs]) =>
            send({ _tag: "CallTool", workerId, name, args: text, timeoutMs }, options?.signal)
        })
      )
    }).pipe(span("McpWorkers.callTool", { workerId: id, tool: name })) as Effect.Effect<
      McpWorkers.CallToolResult,
      RequestError
    >

  const status: McpWorkers.McpWorkersService["status"] = (id) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => send({ _tag: "Status", workerId })
      })
    ) as Effect.Effect<WorkerStatus, UnknownWorker | HostUnavailable>

  const cancel: McpWorkers.McpWorkersService["cancel"] = (id, requestId) =>
    Effect.suspend(() =>
      Either.match(checkId(id), {
        onLeft: Effect.fail,
        onRight: (workerId) => send({ _tag: "Cancel", workerId, requestId: String(requestId) })
      })
    ).pipe(Effect.asVoid) as ReturnType<McpWorkers.McpWorkersService["cancel"]>

  const close: McpWorkers.McpWorkersService["close"] = (id, options) =>
    Effect.suspend(() =>
      Either.all([checkId(id), millis(options?.timeout, "timeout")]).pipe(
        Either.match({
          onLeft: Effect.fail,
          onRight: ([workerId, timeoutMs]) => send({ _tag: "Close", workerId, timeoutMs })
        })
      )
    ).pipe(span("McpWorkers.close", { workerId: id })) as ReturnType<McpWorkers.McpWorkersService["close"]>

  const service: RemoteService = { open, listTools, callTool, status, cancel, close }
  return service
})

/**
 * `McpWorkers` in any thread of a process whose host registry runs in some thread.
 *
 * @internal
 */
export const layer: Layer.Layer<McpWorkers.McpWorkers> = Layer.scoped(McpWorkers.McpWorkers, make)
