// C34. No SDK `authProvider`: its 401 handling re-authorizes unbounded, untyped.
import type * as Owner from "@mcp-worker/core/protocol/Owner"
import type * as ServerConfig from "@mcp-worker/core/ServerConfig"
import * as Redact from "@mcp-worker/core/Redact"
import {
  auth,
  createPrivateKeyJwtAuth,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  IssuerMismatchError,
  type FetchLike,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens
} from "@modelcontextprotocol/client"
import * as Redacted from "effect/Redacted"

/** @internal */
export class AuthorizationError extends Error {
  override readonly name = "AuthorizationError"
}

/** @internal */
export interface Authorizer {
  /** One retry after a refusal. */
  readonly wrap: (fetch: FetchLike) => FetchLike
  /** Never shown. */
  readonly secrets: () => ReadonlyArray<string>
  readonly stop: () => void
  readonly waitingForUser: () => boolean
}

interface Store {
  tokens: OAuthTokens | undefined
  /** A little before expiry. */
  renewAt: number | undefined
  discovery: OAuthDiscoveryState | undefined
  client: OAuthClientInformationMixed | undefined
  resourceMetadataUrl: URL | undefined
  scope: string | undefined
  asked: string | undefined
  readonly secrets: Array<string>
  /** Until the host's client answers with a code. */
  redirect: URL | undefined
  codeVerifier: string | undefined
  loaded: boolean
  /** {@link legacyIssuer} */
  legacyIssuer: boolean
}

const clientName = "mcp-worker"

// A request never leaves with a token expiring on its way.
const renewMargin = (lifetimeMs: number): number => Math.min(60_000, lifetimeMs / 10)

const remember = (store: Store, secret: string | undefined): void => {
  if (secret !== undefined && secret.length > 0 && !store.secrets.includes(secret)) store.secrets.push(secret)
}

const clientCredentialsProvider = (config: ServerConfig.ClientCredentialsAuth, store: Store): OAuthClientProvider => {
  const method = config.tokenEndpointAuthMethod
  const metadata: OAuthClientMetadata = {
    client_name: clientName,
    redirect_uris: [],
    grant_types: ["client_credentials"],
    token_endpoint_auth_method: method,
    ...(config.scope !== undefined ? { scope: config.scope } : {})
  }
  store.client = {
    client_id: config.clientId,
    ...(config.clientSecret !== undefined ? { client_secret: Redacted.value(config.clientSecret) } : {}),
    ...(method !== "private_key_jwt" ? { token_endpoint_auth_method: method } : {})
  }
  const privateKey = config.privateKey
  return {
    get redirectUrl() {
      return undefined
    },
    get clientMetadata() {
      return metadata
    },
    clientInformation: () => store.client,
    saveClientInformation: (information) => {
      store.client = information
    },
    tokens: () => store.tokens,
    saveTokens: (tokens) => saveTokens(store, tokens),
    redirectToAuthorization: () => {
      throw new AuthorizationError("the client credentials grant has no interactive authorization")
    },
    saveCodeVerifier: () => {},
    codeVerifier: () => {
      throw new AuthorizationError("the client credentials grant has no code verifier")
    },
    prepareTokenRequest: (scope) => {
      const params = new URLSearchParams({ grant_type: "client_credentials" })
      store.asked = scope
      if (scope !== undefined) params.set("scope", scope)
      return params
    },
    ...(privateKey !== undefined
      ? {
          addClientAuthentication: createPrivateKeyJwtAuth({
            issuer: config.clientId,
            subject: config.clientId,
            privateKey: Redacted.value(privateKey),
            alg: config.algorithm ?? "RS256"
          })
        }
      : {}),
    discoveryState: () => store.discovery,
    saveDiscoveryState: (state) => {
      store.discovery = state
    }
  }
}

interface InteractiveSettings {
  readonly redirectUrl: string
  readonly clientMetadata: Record<string, unknown>
  readonly clientMetadataUrl?: string
  readonly clientInformation?: OAuthClientInformationMixed
}

/** Only the user's trip through the authorization URL leaves the owner. */
const interactiveProvider = (
  settings: InteractiveSettings,
  store: Store,
  host: Owner.InteractiveOAuth,
  serverUrl: URL
): OAuthClientProvider => {
  const metadata = {
    client_name: clientName,
    redirect_uris: [settings.redirectUrl],
    ...settings.clientMetadata
  } as OAuthClientMetadata
  store.client = settings.clientInformation
  remember(store, settings.clientInformation?.client_secret)
  return {
    get redirectUrl() {
      return settings.redirectUrl
    },
    get clientMetadata() {
      return metadata
    },
    ...(settings.clientMetadataUrl !== undefined ? { clientMetadataUrl: settings.clientMetadataUrl } : {}),
    clientInformation: () => store.client,
    saveClientInformation: (information) => {
      store.client = information
      remember(store, information.client_secret)
    },
    // Asked once: the host's client may keep tokens across workers.
    tokens: async () => {
      if (store.tokens === undefined && !store.loaded) {
        store.loaded = true
        const kept = await host.loadTokens(serverUrl.href)
        if (isTokens(kept)) {
          saveTokens(store, kept)
          // Age unknown: used until refused.
          store.renewAt = undefined
        }
      }
      return store.tokens
    },
    saveTokens: async (tokens) => {
      saveTokens(store, tokens)
      await host.saveTokens(serverUrl.href, tokens)
    },
    redirectToAuthorization: (url) => {
      store.redirect = url
      store.asked = url.searchParams.get("scope") ?? undefined
    },
    saveCodeVerifier: (verifier) => {
      store.codeVerifier = verifier
    },
    codeVerifier: () => {
      if (store.codeVerifier === undefined) throw new AuthorizationError("no authorization is under way")
      return store.codeVerifier
    },
    invalidateCredentials: (scope) => {
      if (scope === "all" || scope === "tokens") store.tokens = undefined
      if (scope === "all" || scope === "client") store.client = settings.clientInformation
      if (scope === "all" || scope === "verifier") store.codeVerifier = undefined
      if (scope === "all" || scope === "discovery") store.discovery = undefined
    },
    discoveryState: () => store.discovery,
    saveDiscoveryState: (state) => {
      store.discovery = state
    }
  }
}

const isTokens = (value: unknown): value is OAuthTokens =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { access_token?: unknown }).access_token === "string" &&
  typeof (value as { token_type?: unknown }).token_type === "string"

/** @internal */
export const saveTokens = (store: Store, tokens: OAuthTokens): void => {
  store.tokens = tokens
  remember(store, tokens.access_token)
  remember(store, tokens.refresh_token)
  remember(store, tokens.id_token)
  const lifetimeMs = typeof tokens.expires_in === "number" ? tokens.expires_in * 1000 : undefined
  store.renewAt = lifetimeMs === undefined ? undefined : Date.now() + lifetimeMs - renewMargin(lifetimeMs)
}

const emptyStore = (): Store => ({
  tokens: undefined,
  renewAt: undefined,
  discovery: undefined,
  client: undefined,
  resourceMetadataUrl: undefined,
  scope: undefined,
  asked: undefined,
  secrets: [],
  redirect: undefined,
  codeVerifier: undefined,
  loaded: false,
  legacyIssuer: false
})

const maxDetail = 200

const failureText = (error: unknown, secrets: ReadonlyArray<string>): string => {
  const text =
    error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : "unknown error"
  const line = Redact.redact(text, secrets).replace(/\s+/g, " ").trim()
  return line.length <= maxDetail ? line : `${line.slice(0, maxDetail)}…`
}

const withAuthorization = (init: RequestInit | undefined, token: string | undefined): RequestInit => {
  const headers = new Headers(init?.headers)
  if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
  return { ...init, headers }
}

const scopeUnion = (...parts: ReadonlyArray<string | undefined>): string =>
  [...new Set(parts.flatMap((part) => (part ?? "").split(" ")).filter((scope) => scope.length > 0))].join(" ")

const widens = (wanted: string, granted: string | undefined): boolean =>
  granted === undefined || wanted.split(" ").some((scope) => !granted.split(" ").includes(scope))

const refusal = (response: Response): { readonly resourceMetadataUrl?: URL; readonly scope?: string } | undefined => {
  if (response.status !== 401 && response.status !== 403) return undefined
  const params = extractWWWAuthenticateParams(response)
  if (response.status === 403 && params.error !== "insufficient_scope") return undefined
  return params
}

/** `serverUrl` is the protected resource. @internal */
export const make = (
  config: ServerConfig.AuthConfig | undefined,
  serverUrl: URL,
  configured: ReadonlyArray<string>,
  interactive: Owner.InteractiveOAuth | undefined
): Authorizer | undefined => {
  const store = emptyStore()
  const secrets = () => [...configured, ...store.secrets]
  if (config?.type === "bearer") {
    const token = Redacted.value(config.token)
    // A fixed token cannot be renewed.
    return {
      wrap: (fetch) => (url, init) => fetch(url, withAuthorization(init, token)),
      secrets,
      stop: () => {},
      waitingForUser: () => false
    }
  }
  const provider =
    config !== undefined
      ? clientCredentialsProvider(config, store)
      : interactive !== undefined
        ? interactiveProvider(JSON.parse(interactive.settings) as InteractiveSettings, store, interactive, serverUrl)
        : undefined
  return provider === undefined ? undefined : renewing(provider, store, serverUrl, secrets, interactive)
}

/** C58: the one exception to RFC 8414 §3.3, as SDK 1.x allowed. */
const legacyIssuer = async (error: unknown, serverUrl: URL, fetchFn: FetchLike): Promise<boolean> => {
  if (!(error instanceof IssuerMismatchError) || error.kind !== "metadata" || error.received === undefined) return false
  const root = new URL("/", serverUrl)
  const sameOrigin = URL.canParse(error.received) && new URL(error.received).origin === serverUrl.origin
  if (error.expected !== root.href || !sameOrigin) return false
  return discoverOAuthProtectedResourceMetadata(serverUrl, undefined, fetchFn).then(
    () => false,
    () => true
  )
}

const renewing = (
  provider: OAuthClientProvider,
  store: Store,
  serverUrl: URL,
  secrets: () => ReadonlyArray<string>,
  interactive: Owner.InteractiveOAuth | undefined
): Authorizer => {
  const aborter = new AbortController()
  const baseFetch: FetchLike = (url, init) => fetch(url, { ...init, signal: aborter.signal })
  // C58, RFC 9207
  const attempt = (authorization?: { readonly code: string; readonly iss: string | undefined }, force = false) =>
    auth(provider, {
      serverUrl,
      fetchFn: baseFetch,
      ...(authorization !== undefined ? { authorizationCode: authorization.code } : {}),
      ...(authorization?.iss !== undefined ? { iss: authorization.iss } : {}),
      ...(store.resourceMetadataUrl !== undefined ? { resourceMetadataUrl: store.resourceMetadataUrl } : {}),
      ...(store.scope !== undefined ? { scope: store.scope } : {}),
      ...(store.legacyIssuer ? { skipIssuerMetadataValidation: true } : {}),
      ...(force ? { forceReauthorization: true } : {})
    })
  const run = (authorization?: { readonly code: string; readonly iss: string | undefined }, force = false) =>
    attempt(authorization, force).catch(async (error: unknown) => {
      if (store.legacyIssuer || !(await legacyIssuer(error, serverUrl, baseFetch))) throw error
      store.legacyIssuer = true
      return attempt(authorization, force)
    })
  let waiting = false
  const flow = async (force: boolean): Promise<void> => {
    store.redirect = undefined
    const result = await run(undefined, force)
    if (result === "AUTHORIZED") return
    const redirect = store.redirect as URL | undefined
    if (interactive === undefined || redirect === undefined) {
      throw new AuthorizationError("the authorization server wants the user's authorization, and no one can ask")
    }
    waiting = true
    const authorization = await interactive
      .authorize(redirect.href)
      .catch((error: unknown) => {
        throw new AuthorizationError(`the user's authorization did not come: ${failureText(error, secrets())}`)
      })
      .finally(() => {
        waiting = false
      })
    remember(store, authorization.code)
    if ((await run(authorization)) !== "AUTHORIZED") {
      throw new AuthorizationError("the authorization server did not authorize")
    }
  }
  let running: Promise<void> | undefined
  // `force`: a refresh could only bring back the old scopes.
  const authorize = (force = false): Promise<void> => {
    running ??= flow(force)
      .catch((error: unknown) => {
        throw error instanceof AuthorizationError
          ? error
          : new AuthorizationError(`authorization failed: ${failureText(error, secrets())}`)
      })
      .finally(() => {
        running = undefined
      })
    return running
  }
  const current = async (): Promise<string | undefined> => {
    if (store.tokens === undefined && interactive !== undefined) await provider.tokens()
    if (store.tokens !== undefined && store.renewAt !== undefined && Date.now() >= store.renewAt) await authorize()
    return store.tokens?.access_token
  }
  return {
    wrap: (fetch) => async (url, init) => {
      const first = await fetch(url, withAuthorization(init, await current()))
      const refused = refusal(first)
      if (refused === undefined) return first
      // C34
      await first.body?.cancel().catch(() => {})
      if (refused.resourceMetadataUrl !== undefined) store.resourceMetadataUrl = refused.resourceMetadataUrl
      // SEP-2352: the resource may name a new authorization server.
      if (first.status === 401) store.discovery = undefined
      // SEP-2350: a step-up keeps the scopes already asked for.
      if (refused.scope !== undefined) {
        store.scope = scopeUnion(store.scope, store.asked, store.tokens?.scope, refused.scope)
      }
      const stepUp = first.status === 403 && store.scope !== undefined && widens(store.scope, store.tokens?.scope)
      await authorize(stepUp)
      return fetch(url, withAuthorization(init, store.tokens?.access_token))
    },
    secrets,
    stop: () => aborter.abort(),
    waitingForUser: () => waiting
  }
}
