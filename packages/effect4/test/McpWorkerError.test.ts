// The errors of the Effect 4 face: each rejection of the implementation (an instance of core's class) becomes this
// package's tagged error, with the same tag, fields and message, that `Effect.catchTag` catches; anything else, and
// anything it cannot read, is a defect of that effect (C69).
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Result from "effect/Result"
import * as CoreErrors from "../../core/src/McpWorkerError.js"
import { call, decodeError, revealSecrets, UndecodableError } from "../src/internal/face.js"
import * as McpWorkerError from "../src/McpWorkerError.js"
import * as Redacted from "effect/Redacted"

// One error of every tag, as the implementation rejects with it: an instance of core's class, made from the samples
// below; a tag core adds and this list lacks fails the first test.
const samples: Record<string, Record<string, unknown>> = {
  UnknownWorker: { workerId: "mcpw_a", delivery: "not_sent" },
  WorkerBusy: { workerId: "mcpw_a", requestId: "req_1", delivery: "not_sent" },
  WorkerFailed: { workerId: "mcpw_a", kind: "transport", message: "gone", delivery: "unknown" },
  DeliveryUnknown: { workerId: "mcpw_a", requestId: "req_1", reason: "stream_broken", delivery: "unknown" },
  ServerError: {
    workerId: "mcpw_a",
    requestId: "req_1",
    code: -32602,
    message: "bad",
    data: { at: 1 },
    delivery: "delivered"
  },
  InvalidInput: { where: "arguments", path: "args.x", message: "not JSON", delivery: "not_sent" },
  OpenFailed: { stage: "initialize", message: "exited", exitCode: 7, stderrTail: "boom", delivery: "unknown" },
  CloseFailed: {
    workerId: "mcpw_a",
    message: "not confirmed",
    cleanup: {
      activeProcesses: 1,
      signalled: { term: 1, kill: 1 },
      escaped: 0,
      durationMs: 5,
      sessionTerminated: null
    },
    delivery: "unknown"
  },
  RequestNotPending: { workerId: "mcpw_a", requestId: "req_2", delivery: "not_sent" },
  HostUnavailable: { message: "no host", delivery: "not_sent" },
  ResultTooLarge: {
    workerId: "mcpw_a",
    requestId: "req_1",
    bytes: 10,
    limit: 5,
    delivery: "unknown",
    bound: "frame",
    spillFailed: "ENOSPC"
  },
  DeadlineExceeded: { workerId: "mcpw_a", delivery: "not_sent" },
  InputRoundsExceeded: { workerId: "mcpw_a", requestId: "req_1", rounds: 8, delivery: "unknown" },
  PreflightFailed: {
    workerId: "mcpw_a",
    requestId: "req_1",
    method: "tools/list",
    detail: "the server answered it with error -32603",
    delivery: "not_sent"
  },
  TaskEnded: {
    workerId: "mcpw_a",
    requestId: "req_1",
    state: "failed",
    statusMessage: "the tool threw",
    code: -32603,
    delivery: "delivered"
  },
  UnusableResult: {
    workerId: "mcpw_a",
    requestId: "req_1",
    reason: "malformed_input_required",
    detail: "no requests",
    delivery: "unknown"
  }
}

const coreErrors = CoreErrors as unknown as Record<
  string,
  new (fields: Record<string, unknown>) => { readonly _tag: McpWorkerError.McpWorkerError["_tag"] }
>
const rejections = CoreErrors.McpWorkerError.members.map((member) => {
  const tag = (member.fields._tag.ast as unknown as { type: { literal: string } }).type.literal
  assert.isDefined(samples[tag], `a sample of ${tag}`)
  return new coreErrors[tag]!(samples[tag]!)
})

// Runs `f` with every `unhandledRejection` of the process recorded; answers them.
const watchingRejections = <A, E>(f: Effect.Effect<A, E>): Effect.Effect<[A, Array<unknown>], E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const seen: Array<unknown> = []
      const listener = (reason: unknown) => seen.push(reason)
      process.on("unhandledRejection", listener)
      return { seen, listener }
    }),
    ({ seen }) => Effect.map(f, (a) => [a, seen] as [A, Array<unknown>]),
    ({ listener }) =>
      // One macrotask: a rejection nobody handled is reported by then.
      Effect.promise(() => new Promise((resolve) => setImmediate(resolve))).pipe(
        Effect.andThen(Effect.sync(() => process.off("unhandledRejection", listener)))
      )
  )

describe("McpWorkerError", () => {
  it.effect("every tag of core's union is decoded with its fields, and encodes as the core's schema encodes it", () =>
    Effect.gen(function* () {
      const encode = Schema.encodeUnknownSync(McpWorkerError.McpWorkerError)
      assert.strictEqual(rejections.length, McpWorkerError.McpWorkerError.members.length)
      for (const rejection of rejections) {
        const decoded = decodeError(rejection)
        assert.isTrue(Result.isSuccess(decoded), rejection._tag)
        const error = (decoded as Result.Success<McpWorkerError.McpWorkerError, unknown>).success
        assert.strictEqual(error._tag, rejection._tag)
        assert.deepStrictEqual<unknown>(encode(error), { _tag: rejection._tag, ...samples[rejection._tag] })
        assert.strictEqual(error.message, (rejection as unknown as Error).message)
      }
      assert.isTrue(Result.isFailure(decodeError(new Error("plain"))))
      assert.isTrue(Result.isFailure(decodeError({ _tag: "SomethingElse" })))
    })
  )

  it.effect("a call's rejection is a typed failure catchTag catches; an unknown one is a defect", () =>
    Effect.gen(function* () {
      const busy = yield* call<string, McpWorkerError.WorkerBusy>(() => Promise.reject(rejections[1])).pipe(
        Effect.as("answered"),
        Effect.catchTag("WorkerBusy", (error) => Effect.succeed(error.message))
      )
      assert.strictEqual(busy, "worker mcpw_a is busy with request req_1; nothing was sent")
      const exit = yield* Effect.exit(call(() => Promise.reject(new TypeError("broken"))))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    })
  )

  it.live(
    "C69: a rejection this face cannot read, or a throw, ends its effect as a defect; nothing goes unhandled",
    () =>
      Effect.gen(function* () {
        const unreadable = {
          _tag: "DeliveryUnknown",
          workerId: "mcpw_a",
          requestId: "r",
          reason: "gone",
          delivery: "unknown"
        }
        const [exits, unhandled] = yield* watchingRejections(
          Effect.all([
            Effect.exit(call(() => Promise.reject(unreadable))),
            Effect.exit(call(() => Promise.reject({ ...samples.ResultTooLarge, _tag: "ResultTooLarge", bound: 1 }))),
            Effect.exit(
              call(() => {
                throw new RangeError("thrown, not rejected")
              })
            )
          ])
        )
        assert.deepStrictEqual(unhandled, [])
        const defects = exits.map((exit) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit.value))
        assert.instanceOf(defects[0], UndecodableError)
        assert.include((defects[0] as Error).message, "DeliveryUnknown")
        assert.include((defects[0] as Error).message, "reason")
        assert.strictEqual((defects[0] as UndecodableError).cause, unreadable)
        assert.include((defects[1] as Error).message, "ResultTooLarge")
        assert.instanceOf(defects[2], RangeError)
        assert.isTrue(exits.every((exit) => Exit.isFailure(exit) && Cause.hasDies(exit.cause)))
      })
  )

  it.live("interrupting a call aborts its signal and completes once the call has settled", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const fiber = yield* Effect.forkChild(
        call(
          (signal) =>
            new Promise((_, reject) =>
              signal.addEventListener("abort", () => {
                seen.push("aborted")
                // The implementation cancels at the server, then rejects.
                setTimeout(() => {
                  seen.push("settled")
                  reject(rejections[3])
                }, 50)
              })
            )
        )
      )
      yield* Effect.sleep(10)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(seen, ["aborted", "settled"])
    })
  )

  it.effect("Redacted values anywhere in a config are revealed as it crosses; nothing else changes", () =>
    Effect.sync(() => {
      const config = {
        command: "server",
        args: ["--a"],
        env: { TOKEN: Redacted.make("t0k3n"), PLAIN: "p" },
        nested: [{ key: Redacted.make("k") }]
      }
      assert.deepStrictEqual(revealSecrets(config), {
        command: "server",
        args: ["--a"],
        env: { TOKEN: "t0k3n", PLAIN: "p" },
        nested: [{ key: "k" }]
      })
      assert.notInclude(JSON.stringify(config), "t0k3n")
    })
  )
})
