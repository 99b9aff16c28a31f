/**
 * The server config shapes `open` accepts, as plain types every face shares: each face says what a secret may be
 * (a string, or also its runtime's `Redacted`).
 *
 * @since 0.1.0
 */

/**
 * The HTTP transports a config may name.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpTransport = "streamable-http" | "sse"

/**
 * Which protocol era a worker speaks: `"auto"` asks the server (`server/discover`) and falls back to the 2025
 * `initialize` handshake for a legacy server; `"legacy"` is that handshake alone; `"2026-07-28"` that revision or
 * nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type Protocol = "auto" | "legacy" | "2026-07-28"

/**
 * How a client authenticates itself at the token endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none"

/**
 * The algorithms a `private_key_jwt` client assertion may be signed with.
 *
 * @since 0.1.0
 * @category models
 */
export type JwtAlgorithm = "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512" | "ES256" | "ES384" | "ES512"

/**
 * A secret of an `auth` input: the value itself, or `{ env: NAME }`, read from the caller's environment as `envFrom`
 * is (C18).
 *
 * @since 0.1.0
 * @category models
 */
export type SecretInput<Secret = string> = Secret | { readonly env: string }

/**
 * `auth` as `open` accepts it: a fixed bearer token, or the OAuth client credentials grant.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthInput<Secret = string> =
  | { readonly type: "bearer"; readonly token: SecretInput<Secret> }
  | {
      readonly type: "client_credentials"
      readonly clientId: string
      readonly clientSecret?: SecretInput<Secret>
      readonly privateKey?: SecretInput<Secret>
      readonly algorithm?: JwtAlgorithm
      readonly scope?: string
      readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod
    }

/**
 * What a stdio and an HTTP config both may name.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonInput {
  readonly timeoutMs?: number
  /** The largest result delivered, in bytes of the server's response message (default 64 MiB). */
  readonly maxResultBytes?: number
  /** `"auto"` (default), `"legacy"` or `"2026-07-28"`: which protocol era to speak. */
  readonly protocol?: Protocol
  /** How many `input_required` retries one call may take before it is stopped (default 8, at most 64). */
  readonly maxInputRounds?: number
}

/**
 * A stdio server as `open` accepts it, also in the `mcpServers` entry form (`type: "stdio"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioInput<Secret = string> extends CommonInput {
  readonly type?: "stdio"
  readonly command: string
  readonly args?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, Secret>>
  /** Names of variables of the caller's environment to pass on; `env` wins for the same name. */
  readonly envFrom?: ReadonlyArray<string>
  readonly cwd?: string
}

/**
 * An HTTP server as `open` accepts it, also in the `mcpServers` entry form (`type: "http"` is Streamable HTTP,
 * `type: "sse"` the older HTTP+SSE transport).
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpInput<Secret = string> extends CommonInput {
  readonly type?: "http" | "sse"
  readonly url: string
  readonly headers?: Readonly<Record<string, Secret>>
  /** Authorization for a server that asks for it: a fixed bearer token, or the OAuth client credentials grant. */
  readonly auth?: AuthInput<Secret>
  readonly transport?: HttpTransport
}

/**
 * A VS Code input (`inputs` of `mcp.json`): a value the editor would ask the user for, given here by the caller
 * (`References.inputs`), else its `default`.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputDeclaration {
  readonly description: string | undefined
  readonly default: string | undefined
  /** The editor hides what is typed: the value is a secret. */
  readonly password: boolean
}

/**
 * Servers by name, each a config as `open` accepts it whose strings may hold references (`${env:NAME}`,
 * `${env:NAME:-default}`, `${input:ID}`, `${workspaceFolder}`, `${userHome}`, `${pathSeparator}`, `${$}`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Document<Entry> {
  readonly servers: Readonly<Record<string, Entry>>
  /** Where each entry was read from (`mcpServers["My Server"]`), the root of the paths reported for it. */
  readonly paths?: Readonly<Record<string, string>> | undefined
  readonly inputs?: Readonly<Record<string, InputDeclaration>> | undefined
}
