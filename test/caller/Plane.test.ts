// C105: the plane's plain types are core's: `WorkerStatus` and `ServerNotification` as the host's schemas type them,
// proven at compile time (a difference fails `tsc -b`), and the status a host returns passes as the caller's type.
import type * as Plane from "@mcp-worker/caller/Plane"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as Operations from "@mcp-worker/core/Operations"
import * as WorkerStatus from "@mcp-worker/core/WorkerStatus"
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Simplify<A> = { [K in keyof A]: A[K] } & {}

const sameStatus: Equals<Simplify<WorkerStatus.WorkerStatus>, Simplify<Plane.WorkerStatus>> = true
const sameState: Equals<WorkerStatus.WorkerState, Plane.WorkerState> = true
const sameNotification: Equals<Simplify<McpWorkers.ServerNotification>, Simplify<Plane.ServerNotification>> = true
const sameProgress: Equals<Simplify<Operations.Progress>, Simplify<Plane.Progress>> = true

describe("Plane types (C105)", () => {
  it("equal core's", () => {
    assert.isTrue(sameStatus && sameState && sameNotification && sameProgress)
    const status: Plane.WorkerStatus = Schema.decodeUnknownSync(WorkerStatus.WorkerStatus)({
      workerId: "w",
      state: "ready",
      busy: false,
      requestId: null,
      pid: null,
      threadId: 1,
      ownerPid: null,
      era: "legacy",
      protocolVersion: "2025-11-25",
      server: { name: "s", version: "1" },
      lastFailure: null,
      cleanup: null,
      notifications: { received: 0, dropped: 0, listChanged: { tools: null, resources: null, prompts: null } }
    })
    assert.strictEqual(status.state, "ready")
  })
})
