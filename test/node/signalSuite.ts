// C66: what a Promise call's `signal` means, one suite run against every Promise surface (the Promise host, the
// Promise client in a remote thread and over a socket, the scoped client of `withClient`). It drives the stateful
// fixture, whose `calls` and `cancelled` tools say what the server saw, and returns plain data.
import { type BehaviourSurface, inFlight } from "./behaviourSuite.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs the suite on a fresh worker of the stateful fixture. */
export const exerciseSignal = async (mcp: BehaviourSurface, id: string) => {
  // Aborted before the call: nothing is sent, and the call rejects with the signal's own reason.
  const before = new Error("aborted before the call")
  const refused = await mcp
    .callTool(id, "echo", { token: "aborted-before" }, { signal: AbortSignal.abort(before) })
    .then(
      () => "answered",
      (error: unknown) => (error === before ? "the signal's reason" : error)
    )

  // Aborted while the request is in flight: it may have reached the server, which is told to stop exactly it.
  const controller = new AbortController()
  const aborting = mcp
    .callTool(id, "sleep", { ms: 10_000, token: "aborted-in-flight" }, { signal: controller.signal })
    .then(
      () => ({ _tag: "answered" }) as Record<string, unknown>,
      (error: Record<string, unknown>) => error
    )
  const requestId = await inFlight(mcp, id)
  controller.abort(new Error("aborted in flight"))
  const aborted = await aborting

  // The next call, at once, finds the worker free on every surface (C11, C46).
  // Aborted after the answer: nothing happens.
  const late = new AbortController()
  const answered = (await mcp.callTool(id, "echo", { token: "answered" }, { signal: late.signal })).structuredContent
    .token
  late.abort()

  let server = { calls: [] as Array<any>, cancelled: [] as Array<any> }
  for (let i = 0; i < 100; i++) {
    await sleep(i === 0 ? 0 : 20)
    server = {
      calls: (await mcp.callTool(id, "calls")).structuredContent.calls,
      cancelled: (await mcp.callTool(id, "cancelled")).structuredContent.cancelled
    }
    if (server.cancelled.length >= 1) break
  }
  const tokenOf = (jsonRpcId: unknown) => server.calls.find((call) => call.id === jsonRpcId)?.token ?? "?"
  return {
    refused,
    aborted: {
      _tag: aborted._tag,
      delivery: aborted.delivery,
      reason: aborted.reason,
      namesTheRequestInFlight: aborted.requestId === requestId,
      namesNoRequest: aborted.requestId === ""
    },
    answered,
    tokensAtServer: server.calls
      .filter((call) => call.name === "sleep" || call.name === "echo")
      .map((call) => call.token),
    cancelledAtServer: server.cancelled.map((c) => [tokenOf(c.requestId), c.reason])
  }
}

/**
 * What every Promise surface answers. A socket client's `DeliveryUnknown` names no request (`requestId: ""`): it
 * answers its caller itself, and never learned the listener's id of the request.
 */
export const expectedSignal = (names: "the request" | "no request" = "the request") => ({
  refused: "the signal's reason",
  aborted: {
    _tag: "DeliveryUnknown",
    delivery: "unknown",
    reason: "interrupted",
    namesTheRequestInFlight: names === "the request",
    namesNoRequest: names === "no request"
  },
  answered: "answered",
  tokensAtServer: ["aborted-in-flight", "answered"],
  cancelledAtServer: [["aborted-in-flight", "interrupted"]]
})
