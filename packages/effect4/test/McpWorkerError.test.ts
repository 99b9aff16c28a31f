// The errors of the Effect 4 face: each rejection of the implementation becomes this package's tagged error, with the
// same tag and fields, that `Effect.catchTag` catches; anything else is a defect.
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import { call, decodeError, revealSecrets } from "../src/internal/face.js"
import * as McpWorkerError from "../src/McpWorkerError.js"
import * as Redacted from "effect/Redacted"

// One error of every tag, as the implementation rejects with it (plain data, fields as the core has them).
const rejections = [
  { _tag: "UnknownWorker", workerId: "mcpw_a", delivery: "not_sent" },
  { _tag: "WorkerBusy", workerId: "mcpw_a", requestId: "req_1", delivery: "not_sent" },
  { _tag: "WorkerFailed", workerId: "mcpw_a", kind: "transport", message: "gone", delivery: "unknown" },
  { _tag: "DeliveryUnknown", workerId: "mcpw_a", requestId: "req_1", reason: "timeout", delivery: "unknown" },
  { _tag: "ServerError", workerId: "mcpw_a", requestId: "req_1", code: -32602, message: "bad", data: { at: 1 } },
  { _tag: "InvalidInput", where: "arguments", path: "args.x", message: "not JSON", delivery: "not_sent" },
  { _tag: "OpenFailed", stage: "initialize", message: "exited", exitCode: 7, stderrTail: "boom" },
  {
    _tag: "CloseFailed",
    workerId: "mcpw_a",
    message: "not confirmed",
    cleanup: { activeProcesses: 1, signalled: { term: 1, kill: 1 }, escaped: 0, durationMs: 5, sessionTerminated: null }
  },
  { _tag: "RequestNotPending", workerId: "mcpw_a", requestId: "req_2" },
  { _tag: "HostUnavailable", message: "no host", delivery: "not_sent" },
  { _tag: "ResultTooLarge", workerId: "mcpw_a", requestId: "req_1", bytes: 10, limit: 5, delivery: "unknown" },
  { _tag: "DeadlineExceeded", workerId: "mcpw_a", delivery: "not_sent" }
] as const

describe("McpWorkerError", () => {
  it.effect("every tag of the implementation is decoded with its fields, and encodes as the core's schema", () =>
    Effect.gen(function* () {
      const encode = Schema.encodeUnknownSync(McpWorkerError.McpWorkerError)
      for (const rejection of rejections) {
        const error = decodeError(rejection)
        assert.isDefined(error, rejection._tag)
        assert.strictEqual(error!._tag, rejection._tag)
        assert.deepStrictEqual(encode(error), rejection)
        assert.isTrue(error!.message.length > 0)
      }
      assert.isUndefined(decodeError(new Error("plain")))
      assert.isUndefined(decodeError({ _tag: "SomethingElse" }))
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
