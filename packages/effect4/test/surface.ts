// The Effect 4 service as the root behaviour suite's `BehaviourSurface`: each call is its own fiber, which the signal
// interrupts (the caller then sees `Interrupted`); failures reject with the error itself.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { McpWorkersService } from "../src/McpWorkers.js"
import type { BehaviourSurface } from "../../../test/node/behaviourSuite.js"

export {
  abortedByInterruption,
  exerciseBehaviour,
  expectedBehaviour,
  withProgress
} from "../../../test/node/behaviourSuite.js"

/** Runs an Effect 4 effect as a Promise that rejects with its failure, `{ _tag: "Interrupted" }`, or its defect. */
export const run = <A>(effect: Effect.Effect<A, unknown>, signal?: AbortSignal): Promise<A> =>
  Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal }).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.findErrorOption(exit.cause)
    if (Option.isSome(failure)) return Promise.reject(failure.value)
    return Promise.reject(Cause.hasInterruptsOnly(exit.cause) ? { _tag: "Interrupted" } : Cause.squash(exit.cause))
  })

/** The service as a behaviour surface. */
export const effect4Surface = (workers: McpWorkersService): BehaviourSurface => ({
  callTool: (id, name, args, options) =>
    run(
      workers.callTool(id, name, args, {
        ...(options?.timeout === undefined ? {} : { timeout: options.timeout }),
        ...(options?.onProgress === undefined ? {} : { onProgress: options.onProgress as () => void })
      }),
      options?.signal
    ),
  cancel: (id, requestId) => run(workers.cancel(id, requestId)),
  status: (id) => run(workers.status(id))
})
