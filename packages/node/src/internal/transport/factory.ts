import type * as Owner from "@mcp-worker/core/protocol/Owner"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "../job/start.js"
import * as StdioTransport from "./stdio.js"

/** `early` is adopted by stdio or ended by `discard`. @internal */
export const makeFactory = (early: ProcessStart.StartedProcess | undefined) => {
  let unclaimed = early
  const make: Owner.TransportFactory = (config, context) => {
    if (config._tag === "Http") {
      return Effect.promise(() => import("./streamableHttp.js")).pipe(
        Effect.flatMap((HttpTransport) => HttpTransport.make(config, context))
      )
    }
    const started = unclaimed
    unclaimed = undefined
    return StdioTransport.make(config, context, started)
  }
  const discard = () => {
    const child = unclaimed?.child
    unclaimed = undefined
    if (child?.pid === undefined) return
    try {
      process.kill(-child.pid, "SIGKILL")
    } catch {
      // already gone
    }
    child.stdin?.destroy()
    child.stdout?.destroy()
    child.stderr?.destroy()
  }
  return { make, discard }
}
