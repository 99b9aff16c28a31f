/**
 * Builds the owner transport for a normalized config: a process job for stdio, the SDK's HTTP transports for
 * URLs.
 */
import type * as Owner from "@mcp-worker/core/Owner"
import * as Effect from "effect/Effect"
import * as HttpTransport from "./httpTransport.js"
import * as StdioTransport from "./stdioTransport.js"

/** @internal */
export const factory: Owner.TransportFactory = (config, context) =>
  config._tag === "Stdio"
    ? StdioTransport.make(config, context)
    : Effect.suspend(() => HttpTransport.make(config, context))
