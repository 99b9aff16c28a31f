/**
 * Builds the owner transport for a normalized config: a process job for stdio, the SDK's HTTP transports for
 * URLs.
 */
import type * as Owner from "@mcp-worker/core/Owner"
import * as Effect from "effect/Effect"
import type * as ProcessStart from "../job/start.js"
import * as StdioTransport from "./stdio.js"

/**
 * The factory of one owner. `early` is the server process the thread's entry already started, if any; it is
 * adopted by the stdio transport, or ended by `discard` if no open ever took it.
 *
 * @internal
 */
export const makeFactory = (early: ProcessStart.StartedProcess | undefined) => {
  let unclaimed = early
  const make: Owner.TransportFactory = (config, context) => {
    if (config._tag === "Http") {
      return Effect.promise(() => import("./http.js")).pipe(
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
