import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as JsonValue from "../../JsonValue.js"
import type { InvalidInput } from "../../McpWorkerError.js"
import type { ServerConfig } from "../../ServerConfig.js"
import * as AuthNormalize from "./auth.js"
import * as internal from "./normalize.js"

/** @internal */
export const secretsOf = (config: ServerConfig): ReadonlyArray<string> =>
  config._tag === "Stdio"
    ? Object.values(config.env).map(Redacted.value)
    : [...Object.values(config.headers), ...AuthNormalize.secrets(config.auth)].map(Redacted.value)

/** @internal */
export const toWire = (config: ServerConfig): string => {
  const wire: Record<string, JsonValue.JsonValue> =
    config._tag === "Stdio"
      ? { command: config.command, args: config.args, env: internal.reveal(config.env) }
      : { url: config.url, headers: internal.reveal(config.headers) }
  if (config._tag === "Stdio" && config.cwd !== undefined) wire.cwd = config.cwd
  if (config._tag === "Http" && config.transport !== undefined) wire.transport = config.transport
  if (config._tag === "Http" && config.auth !== undefined) wire.auth = AuthNormalize.toWire(config.auth)
  if (config.timeoutMs !== undefined) wire.timeoutMs = config.timeoutMs
  if (config.maxResultBytes !== undefined) wire.maxResultBytes = config.maxResultBytes
  if (config.protocol !== undefined) wire.protocol = config.protocol
  if (config.maxInputRounds !== undefined) wire.maxInputRounds = config.maxInputRounds
  return JSON.stringify(wire)
}

/** @internal */
export const fromWire = (text: string): Either.Either<ServerConfig, InvalidInput> =>
  Either.flatMap(JsonValue.decode(text, { where: "config", root: internal.root }), (value) =>
    internal.normalize(value, {})
  )
