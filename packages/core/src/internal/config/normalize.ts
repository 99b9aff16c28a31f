// Failures name keys and kinds at a precise path, never values.
import * as Caller from "@mcp-worker/caller/Operations"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as JsonValue from "../../JsonValue.js"
import type {
  AuthConfig,
  HttpConfig,
  HttpTransport,
  NormalizeOptions,
  Protocol,
  ServerConfig,
  StdioConfig
} from "../../ServerConfig.js"
import * as AuthNormalize from "./auth.js"
import { type Environment, hasNul, invalid, isEnvName, kindOf, own, type Result, string } from "./check.js"

export { type Environment, hasNul, invalid, isEnvName, kindOf, own, type Result, string } from "./check.js"

/** 2³¹ − 1 ms, Node's longest timer. @internal */
export const maxTimeoutMs: number = Caller.maxTimeoutMs

/** @internal */
export const ignoredKeys: ReadonlySet<string> = new Set([
  "disabled",
  "autoApprove",
  "alwaysAllow",
  "description",
  "name",
  "timeout",
  "trust",
  "includeTools",
  "excludeTools"
])

/** @internal */
export const root = "config"

const stdioKeys: ReadonlySet<string> = new Set([
  "type",
  "command",
  "args",
  "env",
  "envFrom",
  "cwd",
  "timeoutMs",
  "maxResultBytes",
  "protocol",
  "maxInputRounds"
])

const httpKeys: ReadonlySet<string> = new Set([
  "type",
  "url",
  "headers",
  "auth",
  "transport",
  "timeoutMs",
  "maxResultBytes",
  "protocol",
  "maxInputRounds"
])

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

// fetch refuses these with an error that quotes the value.
const badHeaderValue = /[\r\n\u0000]/

const setOwn = <A>(record: Record<string, A>, key: string, value: A): void => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
}

/** @internal */
export const reveal = (record: Readonly<Record<string, Redacted.Redacted<string>>>): JsonValue.JsonObject => {
  const out: Record<string, string> = {}
  for (const key of Object.keys(record)) setOwn(out, key, Redacted.value(record[key]))
  return out
}

const wholeNumber =
  (unit: string, max: number) =>
  (value: JsonValue.JsonValue, path: string): Result<number> =>
    typeof value === "number" && Number.isInteger(value) && value > 0 && value <= max
      ? Either.right(value)
      : invalid(
          path,
          `must be a whole number of ${unit} from 1 to ${max}` +
            (typeof value === "number" ? "" : ` (got ${kindOf(value)})`)
        )

const timeoutMs = wholeNumber("milliseconds", maxTimeoutMs)

/** @internal */
export const maxMaxResultBytes = 500 * 1024 * 1024

const maxResultBytes = wholeNumber("bytes", maxMaxResultBytes)

/** @internal */
export const defaultMaxInputRounds = 8

const maxInputRounds = wholeNumber("rounds", 64)

const protocolOf = (value: JsonValue.JsonValue, path: string): Result<Protocol> =>
  value === "auto" || value === "legacy" || value === "2026-07-28"
    ? Either.right(value)
    : invalid(path, `must be "auto", "legacy" or "2026-07-28"`)

const stringArray = (value: JsonValue.JsonValue | undefined, path: string): Result<ReadonlyArray<string>> => {
  if (!Array.isArray(value)) return invalid(path, `must be an array of strings (got ${kindOf(value)})`)
  for (let i = 0; i < value.length; i++) {
    const item = value[i]
    if (typeof item !== "string") {
      return invalid(JsonValue.appendPath(path, i), `must be a string (got ${kindOf(item)})`)
    }
    if (hasNul(item)) return invalid(JsonValue.appendPath(path, i), "must not contain a NUL character")
  }
  // The caller may reuse its array after `open` returned.
  return Either.right(value.slice() as Array<string>)
}

const stringRecord = (
  value: JsonValue.JsonValue | undefined,
  path: string,
  what: "environment variable" | "header"
): Result<ReadonlyArray<readonly [string, string]>> => {
  if (!JsonValue.isJsonObject(value)) {
    return invalid(path, `must be an object mapping each ${what} name to a string (got ${kindOf(value)})`)
  }
  const entries: Array<readonly [string, string]> = []
  const seen = new Set<string>()
  for (const name of Object.keys(value)) {
    const at = JsonValue.appendPath(path, name)
    const item = value[name]
    if (what === "header") {
      if (!headerName.test(name)) return invalid(at, "is not a valid HTTP header name")
      if (seen.has(name.toLowerCase())) return invalid(at, "repeats a header name (header names ignore case)")
      seen.add(name.toLowerCase())
    } else if (!isEnvName(name)) {
      return invalid(at, "is not a valid environment variable name (empty, or contains = or NUL)")
    }
    if (typeof item !== "string") return invalid(at, `must be a string (got ${kindOf(item)})`)
    if (what === "header" ? badHeaderValue.test(item) : hasNul(item)) {
      return invalid(at, what === "header" ? "must not contain CR, LF or NUL" : "must not contain a NUL character")
    }
    entries.push([name, item])
  }
  return Either.right(entries)
}

/** @internal */
export const normalizeEntry = (
  entry: JsonValue.JsonObject,
  path: string,
  environment: Environment
): Result<ServerConfig> => {
  const type = own(entry, "type")
  if (type !== undefined && type !== "stdio" && type !== "http" && type !== "sse") {
    return invalid(JsonValue.appendPath(path, "type"), `must be "stdio", "http" or "sse"`)
  }
  const kind =
    type === "stdio"
      ? "stdio"
      : type !== undefined
        ? "http"
        : Object.hasOwn(entry, "command")
          ? "stdio"
          : Object.hasOwn(entry, "url")
            ? "http"
            : undefined
  if (kind === undefined) return invalid(path, "needs a command (a stdio server) or a url (an HTTP server)")
  const allowed = kind === "stdio" ? stdioKeys : httpKeys
  for (const key of Object.keys(entry)) {
    if (allowed.has(key) || ignoredKeys.has(key)) continue
    const message =
      key === "url" || key === "command"
        ? type === undefined
          ? "cannot be given together with a command; a config has a command or a url"
          : `does not fit type ${JSON.stringify(type)}`
        : (kind === "stdio" ? httpKeys : stdioKeys).has(key)
          ? `applies only to ${kind === "stdio" ? "HTTP servers (url)" : "stdio servers (command)"}`
          : "is not a known config key"
    return invalid(JsonValue.appendPath(path, key), message)
  }
  return kind === "stdio"
    ? normalizeStdio(entry, path, environment)
    : normalizeHttp(entry, path, environment, type === "http" ? "streamable-http" : type === "sse" ? "sse" : undefined)
}

const optional = <A>(
  entry: JsonValue.JsonObject,
  path: string,
  key: string,
  validate: (value: JsonValue.JsonValue, path: string) => Result<A>
): Result<A | undefined> =>
  Object.hasOwn(entry, key) ? validate(entry[key], JsonValue.appendPath(path, key)) : Either.right(undefined)

const normalizeStdio = (entry: JsonValue.JsonObject, path: string, environment: Environment): Result<StdioConfig> =>
  Either.gen(function* () {
    if (!Object.hasOwn(entry, "command")) {
      return yield* invalid(JsonValue.appendPath(path, "command"), "is required for a stdio server")
    }
    const command = yield* string(entry.command, JsonValue.appendPath(path, "command"), "a command")
    const args = yield* optional(entry, path, "args", stringArray)
    const cwd = yield* optional(entry, path, "cwd", (value, at) => string(value, at, "a directory"))
    const timeout = yield* optional(entry, path, "timeoutMs", timeoutMs)
    const resultLimit = yield* optional(entry, path, "maxResultBytes", maxResultBytes)
    const era = yield* optional(entry, path, "protocol", protocolOf)
    const rounds = yield* optional(entry, path, "maxInputRounds", maxInputRounds)
    const env: Record<string, Redacted.Redacted<string>> = {}
    const envFrom = yield* optional(entry, path, "envFrom", stringArray)
    const envFromPath = JsonValue.appendPath(path, "envFrom")
    for (let i = 0; envFrom !== undefined && i < envFrom.length; i++) {
      const name = envFrom[i]
      const at = JsonValue.appendPath(envFromPath, i)
      if (!isEnvName(name)) return yield* invalid(at, "is not a valid environment variable name")
      const found = Object.hasOwn(environment, name) ? environment[name] : undefined
      if (typeof found !== "string") {
        return yield* invalid(at, `names the environment variable ${JSON.stringify(name)}, which is not set`)
      }
      if (hasNul(found)) {
        return yield* invalid(at, `names the environment variable ${JSON.stringify(name)}, which holds a NUL`)
      }
      setOwn(env, name, Redacted.make(found))
    }
    const explicit = yield* optional(entry, path, "env", (value, at) => stringRecord(value, at, "environment variable"))
    for (const [name, value] of explicit ?? []) setOwn(env, name, Redacted.make(value))
    return {
      _tag: "Stdio",
      command,
      args: args ?? [],
      env,
      cwd,
      timeoutMs: timeout,
      maxResultBytes: resultLimit,
      protocol: era,
      maxInputRounds: rounds
    } as const
  })

const normalizeHttp = (
  entry: JsonValue.JsonObject,
  path: string,
  environment: Environment,
  typeTransport: HttpTransport | undefined
): Result<HttpConfig> =>
  Either.gen(function* () {
    const urlPath = JsonValue.appendPath(path, "url")
    if (!Object.hasOwn(entry, "url")) return yield* invalid(urlPath, "is required for an HTTP server")
    const url = yield* string(entry.url, urlPath, "an http: or https: URL")
    if (!URL.canParse(url)) return yield* invalid(urlPath, "must be an absolute http: or https: URL")
    const protocol = new URL(url).protocol
    if (protocol !== "http:" && protocol !== "https:") {
      return yield* invalid(urlPath, `must be an http: or https: URL (got ${JSON.stringify(protocol.slice(0, 32))})`)
    }
    const given = yield* optional(entry, path, "transport", (value, at): Result<HttpTransport> =>
      value === "streamable-http" || value === "sse"
        ? typeTransport === undefined || value === typeTransport
          ? Either.right(value)
          : invalid(at, `contradicts type ${typeTransport === "sse" ? '"sse"' : '"http"'}`)
        : invalid(at, `must be "streamable-http" or "sse"`)
    )
    const timeout = yield* optional(entry, path, "timeoutMs", timeoutMs)
    const resultLimit = yield* optional(entry, path, "maxResultBytes", maxResultBytes)
    const era = yield* optional(entry, path, "protocol", protocolOf)
    const rounds = yield* optional(entry, path, "maxInputRounds", maxInputRounds)
    const headers: Record<string, Redacted.Redacted<string>> = {}
    const explicit = yield* optional(entry, path, "headers", (value, at) => stringRecord(value, at, "header"))
    for (const [name, value] of explicit ?? []) setOwn(headers, name, Redacted.make(value))
    const auth: AuthConfig | undefined = yield* optional(entry, path, "auth", (value, at) =>
      AuthNormalize.normalize(value, at, environment)
    )
    return {
      _tag: "Http",
      url,
      headers,
      auth,
      transport: given ?? typeTransport,
      timeoutMs: timeout,
      maxResultBytes: resultLimit,
      protocol: era,
      maxInputRounds: rounds
    } as const
  })

/** @internal */
export const normalize = (
  input: unknown,
  environment: Readonly<Record<string, string | undefined>>,
  options?: NormalizeOptions
): Result<ServerConfig> => {
  const checked = JsonValue.check(input, { where: "config", root, isProxy: options?.isProxy })
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const value = checked.right
  if (!JsonValue.isJsonObject(value)) {
    return invalid(root, `must be an object with a command or a url (got ${kindOf(value)})`)
  }
  if (!Object.hasOwn(value, "mcpServers")) return normalizeEntry(value, root, environment)
  for (const key of Object.keys(value)) {
    if (key !== "mcpServers") {
      return invalid(JsonValue.appendPath(root, key), "is not expected next to mcpServers")
    }
  }
  const serversPath = JsonValue.appendPath(root, "mcpServers")
  const servers = value.mcpServers
  if (!JsonValue.isJsonObject(servers)) {
    return invalid(serversPath, `must be an object mapping one server name to its config (got ${kindOf(servers)})`)
  }
  const names = Object.keys(servers)
  if (names.length !== 1) {
    return invalid(serversPath, `must hold exactly one server (it holds ${names.length}); open one server at a time`)
  }
  const entryPath = JsonValue.appendPath(serversPath, names[0])
  const entry = servers[names[0]]
  return JsonValue.isJsonObject(entry)
    ? normalizeEntry(entry, entryPath, environment)
    : invalid(entryPath, `must be an object with a command or a url (got ${kindOf(entry)})`)
}
