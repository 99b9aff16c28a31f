/**
 * Server configs: the shapes `open` accepts, their normalized form, and the wire form that carries a normalized
 * config to its owner thread.
 *
 * `normalize` runs in the caller's thread. It checks that the input is JSON plain data (C16), validates its shape
 * with a precise `InvalidInput.path`, resolves `envFrom` against the caller's environment (C18), and wraps every
 * `env` and `headers` value in `Redacted` (C24). Messages name keys and kinds of values, never values.
 *
 * @since 0.1.0
 */
import type * as ConfigInput from "@mcp-worker/caller/ConfigInput"
import type * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import type * as JsonValue from "./JsonValue.js"
import type { InvalidInput } from "./McpWorkerError.js"
import * as internal from "./internal/config/normalize.js"
import * as wire from "./internal/config/wire.js"

/**
 * The HTTP transports a config may name.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpTransport = ConfigInput.HttpTransport

/**
 * A local server spoken to over its stdin and stdout.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioConfig {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** `env` merged over the resolved `envFrom`; the server also gets a minimal default environment. */
  readonly env: Readonly<Record<string, Redacted.Redacted<string>>>
  readonly cwd: string | undefined
  readonly timeoutMs: number | undefined
  /** The largest result (one response message, in bytes) delivered; `undefined` means `defaultMaxResultBytes`. */
  readonly maxResultBytes: number | undefined
  /** Which protocol era to speak; `undefined` means `"auto"` (C51). */
  readonly protocol: Protocol | undefined
  /** Retries of one multi-round-trip call before it is stopped; `undefined` means `defaultMaxInputRounds` (C53). */
  readonly maxInputRounds: number | undefined
}

/**
 * A remote server spoken to over HTTP. Without a `transport`, Streamable HTTP is tried first.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpConfig {
  readonly _tag: "Http"
  readonly url: string
  readonly headers: Readonly<Record<string, Redacted.Redacted<string>>>
  /** How the owner authorizes its requests, if the server asks for it (C34). */
  readonly auth: AuthConfig | undefined
  readonly transport: HttpTransport | undefined
  readonly timeoutMs: number | undefined
  /** The largest result (one response message, in bytes) delivered; `undefined` means `defaultMaxResultBytes`. */
  readonly maxResultBytes: number | undefined
  /** Which protocol era to speak; `undefined` means `"auto"` (C51). */
  readonly protocol: Protocol | undefined
  /** Retries of one multi-round-trip call before it is stopped; `undefined` means `defaultMaxInputRounds` (C53). */
  readonly maxInputRounds: number | undefined
}

/**
 * Which protocol era a worker speaks (`"auto"`, `"legacy"`, `"2026-07-28"`).
 *
 * @since 0.1.0
 * @category models
 */
export type Protocol = ConfigInput.Protocol

/**
 * How a client authenticates itself at the token endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export type TokenEndpointAuthMethod = ConfigInput.TokenEndpointAuthMethod

/**
 * The algorithms a `private_key_jwt` client assertion may be signed with.
 *
 * @since 0.1.0
 * @category models
 */
export type JwtAlgorithm = ConfigInput.JwtAlgorithm

/**
 * A fixed access token, sent as `Authorization: Bearer`. It cannot be refreshed: a 401 fails the worker.
 *
 * @since 0.1.0
 * @category models
 */
export interface BearerAuth {
  readonly type: "bearer"
  readonly token: Redacted.Redacted<string>
}

/**
 * The OAuth client credentials grant: the owner obtains its tokens from the authorization server the MCP server
 * names, and obtains a new one before the old one expires or when the server refuses it (C34).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientCredentialsAuth {
  readonly type: "client_credentials"
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string> | undefined
  /** A PKCS#8 PEM private key, for `private_key_jwt`. */
  readonly privateKey: Redacted.Redacted<string> | undefined
  readonly algorithm: JwtAlgorithm | undefined
  readonly scope: string | undefined
  readonly tokenEndpointAuthMethod: TokenEndpointAuthMethod
}

/**
 * The authorization of an HTTP server's config.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthConfig = BearerAuth | ClientCredentialsAuth

/**
 * A secret of an `auth` input: the value itself, or `{ env: NAME }` (C18).
 *
 * @since 0.1.0
 * @category models
 */
export type SecretInput = ConfigInput.SecretInput

/**
 * `auth` as `open` accepts it.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthInput = ConfigInput.AuthInput

/**
 * A normalized config, secrets held in `Redacted`.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerConfig = StdioConfig | HttpConfig

/**
 * Keys that editors and desktop clients write in `mcpServers` entries. They are accepted and ignored.
 *
 * @since 0.1.0
 * @category constants
 */
export const ignoredKeys: ReadonlySet<string> = internal.ignoredKeys

/**
 * The editor keys listed in `ignoredKeys`: allowed, never read.
 *
 * @since 0.1.0
 * @category models
 */
export interface IgnoredKeysInput {
  readonly disabled?: JsonValue.JsonValue
  readonly autoApprove?: JsonValue.JsonValue
  readonly alwaysAllow?: JsonValue.JsonValue
  readonly description?: JsonValue.JsonValue
  readonly name?: JsonValue.JsonValue
  readonly timeout?: JsonValue.JsonValue
  readonly trust?: JsonValue.JsonValue
  readonly includeTools?: JsonValue.JsonValue
  readonly excludeTools?: JsonValue.JsonValue
}

/**
 * A stdio server as `open` accepts it, also in the `mcpServers` entry form (`type: "stdio"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioConfigInput extends ConfigInput.StdioInput, IgnoredKeysInput {}

/**
 * An HTTP server as `open` accepts it, also in the `mcpServers` entry form (`type: "http"` is Streamable HTTP,
 * `type: "sse"` the older HTTP+SSE transport).
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpConfigInput extends ConfigInput.HttpInput, IgnoredKeysInput {}

/**
 * A whole `mcpServers` document holding exactly one server.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpServersInput {
  readonly mcpServers: Readonly<Record<string, StdioConfigInput | HttpConfigInput>>
}

/**
 * Every config shape `open` accepts (JSON plain data only).
 *
 * @since 0.1.0
 * @category models
 */
export type ServerConfigInput = StdioConfigInput | HttpConfigInput | McpServersInput

/**
 * Options of `normalize`.
 *
 * @since 0.1.0
 * @category models
 */
export interface NormalizeOptions {
  /** Rejects proxies before any trap runs (Node: `util.types.isProxy`). */
  readonly isProxy?: ((u: unknown) => boolean) | undefined
}

/**
 * The largest timeout a timer can hold (2^31 - 1 ms).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTimeoutMs: number = internal.maxTimeoutMs

/**
 * The default `maxResultBytes`: 64 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxResultBytes: number = 64 * 1024 * 1024

/**
 * The default `maxInputRounds`: 8 retries of one multi-round-trip call.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxInputRounds: number = internal.defaultMaxInputRounds

/**
 * The `maxInputRounds` of a config, its default applied.
 *
 * @since 0.1.0
 * @category accessors
 */
export const maxInputRoundsOf = (config: ServerConfig): number => config.maxInputRounds ?? defaultMaxInputRounds

/**
 * The largest `maxResultBytes` a config may set (500 MiB: a result must still fit in one JavaScript string).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxMaxResultBytes: number = internal.maxMaxResultBytes

/**
 * The result limit of a config, its default applied.
 *
 * @since 0.1.0
 * @category accessors
 */
export const maxResultBytesOf = (config: ServerConfig): number => config.maxResultBytes ?? defaultMaxResultBytes

/**
 * The bound of an answer to a request the owner sends of its own accord (the era probe, the tool listing it reads for
 * tasks): the config's result limit, never below the default one. Such an answer is not the caller's result (C95).
 *
 * @since 0.1.0
 * @category accessors
 */
export const ownRequestBytesOf = (config: ServerConfig): number =>
  Math.max(maxResultBytesOf(config), defaultMaxResultBytes)

/**
 * Validates a config input and normalizes it; `envFrom` names are resolved against `environment` (the caller's
 * `process.env`), which is only read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const normalize: (
  input: unknown,
  environment: Readonly<Record<string, string | undefined>>,
  options?: NormalizeOptions
) => Either.Either<ServerConfig, InvalidInput> = internal.normalize

/**
 * Every secret of a config, revealed: the `env` and `headers` values and the `auth` secrets, for `Redact`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const secretsOf: (config: ServerConfig) => ReadonlyArray<string> = wire.secretsOf

/**
 * What a config may say about itself in logs and spans: its transport, nothing else.
 *
 * @since 0.1.0
 * @category accessors
 */
export const describe = (config: ServerConfig): { readonly transport: HttpTransport | "stdio" | "http" } => ({
  transport: config._tag === "Stdio" ? "stdio" : (config.transport ?? "http")
})

/**
 * The normalized config as JSON text for its owner thread, secrets revealed (a `Redacted` cannot cross a thread).
 * The text is itself a valid config input with nothing left to resolve.
 *
 * @since 0.1.0
 * @category wire
 */
export const toWire: (config: ServerConfig) => string = wire.toWire

/**
 * Reads the wire form back into a normalized config, secrets wrapped in `Redacted` again.
 *
 * @since 0.1.0
 * @category wire
 */
export const fromWire: (text: string) => Either.Either<ServerConfig, InvalidInput> = wire.fromWire
