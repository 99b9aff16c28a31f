// C24, C34
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as JsonValue from "../../JsonValue.js"
import type {
  AuthConfig,
  BearerAuth,
  ClientCredentialsAuth,
  JwtAlgorithm,
  TokenEndpointAuthMethod
} from "../../ServerConfig.js"
import { type Environment, hasNul, invalid, isEnvName, kindOf, own, type Result, string } from "./check.js"

const bearerKeys: ReadonlySet<string> = new Set(["type", "token"])

const clientCredentialsKeys: ReadonlySet<string> = new Set([
  "type",
  "clientId",
  "clientSecret",
  "privateKey",
  "algorithm",
  "scope",
  "tokenEndpointAuthMethod"
])

const methods: ReadonlyArray<TokenEndpointAuthMethod> = [
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
  "none"
]

const algorithms: ReadonlyArray<JwtAlgorithm> = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512"
]

// A header cannot carry these, and the token endpoint would get something other than configured.
const badSecret = /[\r\n\u0000]/

// A PEM key is lines of text; tokens and client secrets travel in headers and must be one line.
const secret = (
  value: JsonValue.JsonValue | undefined,
  path: string,
  environment: Environment,
  pem = false
): Result<Redacted.Redacted<string>> => {
  const bad = pem ? /\u0000/ : badSecret
  const what = pem ? "NUL" : "CR, LF or NUL"
  if (typeof value === "string") {
    if (value.length === 0) return invalid(path, "must not be empty")
    return bad.test(value) ? invalid(path, `must not contain ${what}`) : Either.right(Redacted.make(value))
  }
  if (!JsonValue.isJsonObject(value)) {
    return invalid(path, `must be a string or { env: NAME } (got ${kindOf(value)})`)
  }
  for (const key of Object.keys(value)) {
    if (key !== "env") return invalid(JsonValue.appendPath(path, key), "is not expected; use { env: NAME }")
  }
  const at = JsonValue.appendPath(path, "env")
  const name = own(value, "env")
  if (typeof name !== "string" || !isEnvName(name)) {
    return invalid(at, "must name an environment variable")
  }
  const found = Object.hasOwn(environment, name) ? environment[name] : undefined
  if (typeof found !== "string" || found.length === 0) {
    return invalid(at, `names the environment variable ${JSON.stringify(name)}, which is not set`)
  }
  if (bad.test(found) || hasNul(found)) {
    return invalid(at, `names the environment variable ${JSON.stringify(name)}, which holds ${what}`)
  }
  return Either.right(Redacted.make(found))
}

const oneOf = <A extends string>(
  value: JsonValue.JsonValue | undefined,
  path: string,
  allowed: ReadonlyArray<A>
): Result<A> =>
  typeof value === "string" && (allowed as ReadonlyArray<string>).includes(value)
    ? Either.right(value as A)
    : invalid(path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`)

const unknownKey = (entry: JsonValue.JsonObject, path: string, allowed: ReadonlySet<string>): Result<void> => {
  for (const key of Object.keys(entry)) {
    if (!allowed.has(key)) return invalid(JsonValue.appendPath(path, key), "is not a known auth key")
  }
  return Either.void
}

const normalizeBearer = (entry: JsonValue.JsonObject, path: string, environment: Environment): Result<BearerAuth> =>
  Either.gen(function* () {
    yield* unknownKey(entry, path, bearerKeys)
    const at = JsonValue.appendPath(path, "token")
    if (!Object.hasOwn(entry, "token")) return yield* invalid(at, "is required for bearer auth")
    const token = yield* secret(entry.token, at, environment)
    return { type: "bearer", token } as const
  })

const normalizeClientCredentials = (
  entry: JsonValue.JsonObject,
  path: string,
  environment: Environment
): Result<ClientCredentialsAuth> =>
  Either.gen(function* () {
    yield* unknownKey(entry, path, clientCredentialsKeys)
    const at = (key: string) => JsonValue.appendPath(path, key)
    const clientId = yield* string(own(entry, "clientId"), at("clientId"), "a client id")
    const optionalOf = <A>(key: string, check: (value: JsonValue.JsonValue, path: string) => Result<A>) =>
      Object.hasOwn(entry, key) ? check(entry[key], at(key)) : Either.right(undefined)
    const clientSecret = yield* optionalOf("clientSecret", (value, p) => secret(value, p, environment))
    const privateKey = yield* optionalOf("privateKey", (value, p) => secret(value, p, environment, true))
    const algorithm = yield* optionalOf("algorithm", (value, p) => oneOf(value, p, algorithms))
    const scope = yield* optionalOf("scope", (value, p) => string(value, p, "a space-separated list of scopes"))
    const given = yield* optionalOf("tokenEndpointAuthMethod", (value, p) => oneOf(value, p, methods))
    const tokenEndpointAuthMethod: TokenEndpointAuthMethod =
      given ??
      (privateKey !== undefined ? "private_key_jwt" : clientSecret !== undefined ? "client_secret_basic" : "none")
    if (tokenEndpointAuthMethod === "private_key_jwt" && privateKey === undefined) {
      return yield* invalid(at("privateKey"), "is required for private_key_jwt")
    }
    if (tokenEndpointAuthMethod.startsWith("client_secret") && clientSecret === undefined) {
      return yield* invalid(at("clientSecret"), `is required for ${tokenEndpointAuthMethod}`)
    }
    if (tokenEndpointAuthMethod !== "private_key_jwt" && privateKey !== undefined) {
      return yield* invalid(at("privateKey"), "applies only to private_key_jwt")
    }
    return {
      type: "client_credentials",
      clientId,
      clientSecret,
      privateKey,
      algorithm,
      scope,
      tokenEndpointAuthMethod
    } as const
  })

/** @internal */
export const normalize = (value: JsonValue.JsonValue, path: string, environment: Environment): Result<AuthConfig> => {
  if (!JsonValue.isJsonObject(value)) {
    return invalid(path, `must be an object with a type "bearer" or "client_credentials" (got ${kindOf(value)})`)
  }
  const type = own(value, "type")
  return type === "bearer"
    ? normalizeBearer(value, path, environment)
    : type === "client_credentials"
      ? normalizeClientCredentials(value, path, environment)
      : invalid(JsonValue.appendPath(path, "type"), `must be "bearer" or "client_credentials"`)
}

/** Still redacted. @internal */
export const secrets = (auth: AuthConfig | undefined): ReadonlyArray<Redacted.Redacted<string>> =>
  auth === undefined
    ? []
    : auth.type === "bearer"
      ? [auth.token]
      : [auth.clientSecret, auth.privateKey].filter((s): s is Redacted.Redacted<string> => s !== undefined)

/** Secrets revealed, nothing left to resolve. @internal */
export const toWire = (auth: AuthConfig): JsonValue.JsonObject => {
  if (auth.type === "bearer") return { type: "bearer", token: Redacted.value(auth.token) }
  const wire: Record<string, JsonValue.JsonValue> = {
    type: "client_credentials",
    clientId: auth.clientId,
    tokenEndpointAuthMethod: auth.tokenEndpointAuthMethod
  }
  if (auth.clientSecret !== undefined) wire.clientSecret = Redacted.value(auth.clientSecret)
  if (auth.privateKey !== undefined) wire.privateKey = Redacted.value(auth.privateKey)
  if (auth.algorithm !== undefined) wire.algorithm = auth.algorithm
  if (auth.scope !== undefined) wire.scope = auth.scope
  return wire
}
