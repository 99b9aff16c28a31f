// C97: an error of mcp-worker that Node prints (uncaught, console.log, inside an Effect FiberFailure) shows its tag,
// delivery and message first, and no frames of the Effect library: a real `node` program lets one go uncaught.
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as McpWorkerError from "../../packages/core/src/McpWorkerError.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

const uncaught = (scenario: "promise" | "effect") =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const program = Path.join(root, "test/fixtures/uncaught-program.ts")
    execFile(
      process.execPath,
      ["--import", "tsx", program, scenario],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr })
    )
  })

const effectFrames = /node_modules[\\/](effect|@effect[\\/][^\\/]+)[\\/]|Schema\.js|ParseResult\.js/

/** Node's report of an uncaught error, from the error's first line on (Node prints the throwing line above it). */
const reportFrom = (stderr: string, header: string): string => {
  const start = stderr.indexOf(header)
  assert.isAtLeast(start, 0, stderr)
  return stderr.slice(start)
}

describe("C97: errors read well when Node prints them", () => {
  it("an error decoded from the owner thread's reply, uncaught from the Promise host: tag, delivery, message, no Effect frames", async () => {
    const { code, stdout, stderr } = await uncaught("promise")
    assert.strictEqual(code, 1, stderr)
    const header = "ResultTooLarge [unknown]: the answer to request "
    // console.log(error) and the uncaught report both begin with the header, then the frames of where it was read.
    assert.isTrue(stdout.startsWith(header), stdout)
    const report = reportFrom(stderr, header)
    assert.match(report.split("\n")[1]!, /^\s+at /, report)
    assert.notMatch(report, effectFrames, report)
    assert.include(report, "delivery: 'unknown'")
  })

  it("an error decoded from the owner thread's reply, out of Effect.runPromise: no Effect frames", async () => {
    const { code, stderr } = await uncaught("effect")
    assert.strictEqual(code, 1, stderr)
    const report = reportFrom(stderr, "OpenFailed [not_sent]: spawn failed (ENOENT)")
    assert.notMatch(report, effectFrames, report)
    assert.include(report, "stage: 'spawn'")
  })

  it("decoded or made here: the stack's first line is the header, toString too; the class and fields are kept", () => {
    const made = new McpWorkerError.WorkerBusy({ workerId: "w", requestId: "r", delivery: "not_sent" })
    const wire = Schema.encodeSync(McpWorkerError.McpWorkerError)(made)
    const decoded = Schema.decodeUnknownSync(McpWorkerError.McpWorkerError)(wire)
    for (const error of [made, decoded]) {
      assert.instanceOf(error, McpWorkerError.WorkerBusy)
      assert.strictEqual(String(error), "WorkerBusy [not_sent]: worker w is busy with request r; nothing was sent")
      assert.strictEqual(error.stack!.split("\n")[0], String(error))
      assert.notMatch(error.stack!, effectFrames)
      assert.deepInclude(error, { _tag: "WorkerBusy", workerId: "w", requestId: "r", delivery: "not_sent" })
    }
    const open = new McpWorkerError.OpenFailed({ stage: "spawn", message: "spawn failed", delivery: "not_sent" })
    assert.strictEqual(String(open), "OpenFailed [not_sent]: spawn failed")
  })
})
