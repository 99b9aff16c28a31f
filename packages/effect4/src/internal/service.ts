// C69: every option passed on as given.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as McpWorkerError from "../McpWorkerError.js"
import type * as McpWorkers from "../McpWorkers.js"
import type { WorkerStatus } from "../WorkerStatus.js"
import * as AgentHost from "./agentHost.js"
import * as Face from "./face.js"
import type { Surface } from "./implementation.js"

type EventsError = McpWorkerError.UnknownWorker | McpWorkerError.InvalidInput | McpWorkerError.HostUnavailable

/** C69 @internal */
export const eventsOf = (
  surface: Surface,
  id: string,
  options: McpWorkers.EventsOptions | undefined
): Stream.Stream<McpWorkers.ServerNotification, EventsError> =>
  Stream.fromAsyncIterable(
    { [Symbol.asyncIterator]: () => surface.events(id, options) as AsyncIterator<McpWorkers.ServerNotification> },
    (error) => error
  ).pipe(
    Stream.catchCause((cause) => {
      const error = Cause.findErrorOption(cause)
      return Option.isNone(error)
        ? Stream.failCause(cause as Cause.Cause<never>)
        : Stream.fromEffect(Face.failureOf<EventsError>(error.value))
    })
  )

/** @internal */
export const make = (surface: Surface): McpWorkers.McpWorkersService => ({
  ...Face.requestsOf((name, id, args, options) => surface[name](id, ...args, options), "McpWorkers"),
  ...AgentHost.make(surface),
  open: (config, options) =>
    Face.call<string, McpWorkerError.OpenFailed | McpWorkerError.InvalidInput | McpWorkerError.HostUnavailable>(
      () => surface.open(Face.revealSecrets(config), Face.openOptionsOf(options)),
      // No worker is left that no one holds.
      (id) => surface.close(id as string)
    ).pipe(Effect.withSpan("McpWorkers.open")),
  status: (id) =>
    Face.call<WorkerStatus, McpWorkerError.UnknownWorker | McpWorkerError.HostUnavailable>(() => surface.status(id)),
  cancel: (id, requestId) =>
    Face.call<void, McpWorkerError.UnknownWorker | McpWorkerError.RequestNotPending | McpWorkerError.HostUnavailable>(
      () => surface.cancel(id, requestId)
    ).pipe(Effect.withSpan("McpWorkers.cancel", { attributes: { workerId: id } })),
  close: (id, options) =>
    Face.call<WorkerStatus, McpWorkerError.UnknownWorker | McpWorkerError.CloseFailed | McpWorkerError.HostUnavailable>(
      () => surface.close(id, { ...options, timeout: Face.timeoutOf(options?.timeout) as number | string | undefined })
    ).pipe(Effect.withSpan("McpWorkers.close", { attributes: { workerId: id } })),
  events: (id, options) => eventsOf(surface, id, options)
})
