import * as Either from "effect/Either"
import * as JsonValue from "../../JsonValue.js"
import { InvalidInput } from "../../McpWorkerError.js"
import type * as McpConfig from "../../agentHost/McpConfig.js"
import * as References from "./references.js"
import * as Check from "./check.js"
import * as ConfigNormalize from "./normalize.js"
import * as Jsonc from "./jsonc.js"

/** @internal */
export interface Rules {
  readonly label: string
  readonly serversKey: "mcpServers" | "servers"
  readonly syntax: References.Syntax
  readonly comments: boolean
  /** `undefined`: any (the file also holds the application's settings). */
  readonly rootKeys: ReadonlySet<string> | undefined
  /** Refused rather than silently ignored. */
  readonly refused: Readonly<Record<string, string>>
  /** Editor-only settings: left out. */
  readonly dropped: ReadonlySet<string>
}

const envFile = "is not supported: list the variables in env (with ${env:NAME} references) or envFrom"

/** @internal */
export const rules: Readonly<Record<McpConfig.Format, Rules>> = {
  "claude-desktop": {
    label: "Claude Desktop",
    serversKey: "mcpServers",
    syntax: "none",
    comments: false,
    rootKeys: undefined,
    refused: {},
    dropped: new Set()
  },
  cursor: {
    label: "Cursor",
    serversKey: "mcpServers",
    syntax: "cursor",
    comments: false,
    rootKeys: new Set(),
    refused: { envFile },
    dropped: new Set()
  },
  vscode: {
    label: "VS Code",
    serversKey: "servers",
    syntax: "vscode",
    comments: true,
    rootKeys: new Set(["inputs"]),
    refused: {
      envFile,
      sandboxEnabled:
        "is not supported: mcp-worker does not sandbox servers, so it does not start one that asks for it",
      sandbox: "is not supported: mcp-worker does not sandbox servers, so it does not start one that asks for it"
    },
    dropped: new Set(["dev", "gallery", "version"])
  },
  "mcp-json": {
    label: "a project .mcp.json",
    serversKey: "mcpServers",
    syntax: "shell",
    comments: false,
    rootKeys: new Set(),
    refused: {
      headersHelper: "is not supported: mcp-worker does not run helper commands; give headers or auth",
      oauth: "is not supported here: give auth (a bearer token or client credentials)"
    },
    dropped: new Set()
  },
  document: {
    label: "a config document",
    serversKey: "servers",
    syntax: "document",
    comments: true,
    rootKeys: new Set(["inputs"]),
    refused: {},
    dropped: new Set()
  }
}

/** @internal */
export const invalid = Check.invalid

/** @internal */
export const invalidInput = (path: string, message: string): InvalidInput =>
  new InvalidInput({ where: "config", path, message, delivery: "not_sent" })

/** The root itself is `""`. @internal */
export const at = (path: string, key: string | number): string => {
  if (path !== "") return JsonValue.appendPath(path, key)
  const appended = JsonValue.appendPath("", key)
  return appended.startsWith(".") ? appended.slice(1) : appended
}

/** @internal */
export const normalizeName = (name: string): string => {
  const folded = name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
  return /^[0-9]/.test(folded) ? `_${folded}` : folded
}

type Templated = { readonly kind: "string" } | { readonly kind: "array" } | { readonly kind: "record" }

const templated: Readonly<Record<string, Templated>> = {
  command: { kind: "string" },
  args: { kind: "array" },
  env: { kind: "record" },
  cwd: { kind: "string" },
  url: { kind: "string" },
  headers: { kind: "record" }
}

/** Values of the wrong kind are skipped here and refused by the entry check. */
const templatedStrings = (
  entry: JsonValue.JsonObject
): ReadonlyArray<readonly [field: string, key: string | number | undefined, text: string]> => {
  const out: Array<readonly [string, string | number | undefined, string]> = []
  for (const field of Object.keys(templated)) {
    const value = Check.own(entry, field)
    const kind = templated[field].kind
    if (kind === "string" && typeof value === "string") out.push([field, undefined, value])
    if (kind === "array" && Array.isArray(value)) {
      value.forEach((item, i) => {
        if (typeof item === "string") out.push([field, i, item])
      })
    }
    if (kind === "record" && JsonValue.isJsonObject(value)) {
      for (const key of Object.keys(value)) {
        const item = value[key]
        if (typeof item === "string") out.push([field, key, item])
      }
    }
  }
  return out
}

const setOwn = (record: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
}

const mapStrings = (
  entry: JsonValue.JsonObject,
  path: string,
  map: (text: string, path: string) => Either.Either<string, InvalidInput>
): Either.Either<JsonValue.JsonObject, InvalidInput> => {
  const copy: Record<string, JsonValue.JsonValue> = {}
  for (const key of Object.keys(entry)) setOwn(copy, key, entry[key])
  for (const [field, key, text] of templatedStrings(entry)) {
    const where = key === undefined ? at(path, field) : at(at(path, field), key)
    const mapped = map(text, where)
    if (Either.isLeft(mapped)) return Either.left(mapped.left)
    if (key === undefined) {
      setOwn(copy, field, mapped.right)
    } else {
      const container = copy[field]
      const next: any = Array.isArray(container) ? container.slice() : { ...(container as object) }
      if (typeof key === "number") next[key] = mapped.right
      else setOwn(next, key, mapped.right)
      setOwn(copy, field, next)
    }
  }
  return Either.right(copy)
}

// Stands for a reference while an entry is checked at read time: it passes every shape rule.
const probe: References.Context = {
  env: () => "x",
  input: () => "x",
  variable: (variable) => (variable === "pathSeparator" ? "/" : variable === "workspaceFolderBasename" ? "x" : "/x")
}

const probeEnvironment = (entry: JsonValue.JsonObject): Record<string, string> => {
  const environment: Record<string, string> = {}
  const envFrom = Check.own(entry, "envFrom")
  if (Array.isArray(envFrom)) for (const name of envFrom) if (typeof name === "string") setOwn(environment, name, "x")
  return environment
}

const expandAll = (entry: JsonValue.JsonObject, path: string, context: References.Context) =>
  mapStrings(entry, path, (text, where) =>
    Either.mapLeft(
      Either.flatMap(References.parse(text, "document"), (parts) => References.expand(parts, context)),
      (message) => invalidInput(where, message)
    )
  )

/** `open`'s own check, with harmless values for references; the real values are checked at open. */
const readEntry = (
  entry: JsonValue.JsonObject,
  path: string,
  format: Rules,
  inputs: ReadonlySet<string> | undefined
): Either.Either<McpConfig.EntryConfig, InvalidInput> =>
  Either.gen(function* () {
    for (const key of Object.keys(entry)) {
      const why = Object.hasOwn(format.refused, key) ? format.refused[key] : undefined
      if (why !== undefined) return yield* invalid(at(path, key), why)
    }
    const kept: Record<string, JsonValue.JsonValue> = {}
    for (const key of Object.keys(entry)) if (!format.dropped.has(key)) setOwn(kept, key, entry[key])
    const referenced = new Set<string>()
    const written = yield* mapStrings(kept, path, (text, where) => {
      const parts = References.parse(text, format.syntax)
      if (Either.isLeft(parts)) return invalid(where, parts.left)
      for (const part of parts.right) {
        if (part._tag === "Input" && inputs !== undefined && !inputs.has(part.id)) {
          return invalid(where, `names the input ${JSON.stringify(part.id)}, which the inputs do not declare`)
        }
      }
      if (References.hasReference(parts.right)) referenced.add(where)
      return Either.right(References.format(parts.right))
    })
    const probed = yield* expandAll(written, path, probe)
    const checked = ConfigNormalize.normalizeEntry(probed, path, probeEnvironment(written))
    if (Either.isLeft(checked) && !referenced.has(checked.left.path)) return yield* Either.left(checked.left)
    return written as unknown as McpConfig.EntryConfig
  })

const readInputs = (
  value: JsonValue.JsonValue,
  path: string
): Either.Either<Record<string, McpConfig.InputDeclaration>, InvalidInput> =>
  Either.gen(function* () {
    if (!Array.isArray(value)) return yield* invalid(path, `must be an array of inputs (got ${Check.kindOf(value)})`)
    const inputs: Record<string, McpConfig.InputDeclaration> = {}
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      const here = at(path, i)
      if (!JsonValue.isJsonObject(item)) return yield* invalid(here, `must be an object (got ${Check.kindOf(item)})`)
      const id = Check.own(item, "id")
      if (typeof id !== "string" || !/^[A-Za-z0-9_.-]+$/.test(id)) {
        return yield* invalid(at(here, "id"), "must be an id of letters, digits, _, . or -")
      }
      if (Object.hasOwn(inputs, id)) return yield* invalid(at(here, "id"), "repeats the id of an earlier input")
      const description = Check.own(item, "description")
      const fallback = Check.own(item, "default")
      const password = Check.own(item, "password")
      setOwn(inputs, id, {
        description: typeof description === "string" ? description : undefined,
        default: typeof fallback === "string" ? fallback : undefined,
        password: password === true
      })
    }
    return inputs
  })

const content = (input: unknown, format: Rules): Either.Either<JsonValue.JsonValue, InvalidInput> => {
  if (typeof input !== "string") {
    return Either.mapLeft(JsonValue.check(input, { where: "config", root: "~" }), (error) =>
      invalidInput(error.path.slice(1).replace(/^\./, ""), error.message)
    )
  }
  return Either.mapLeft(Jsonc.parse(input, { comments: format.comments }), (problem) =>
    invalidInput(
      "",
      `is not valid ${format.comments ? "JSON with comments" : "JSON"} at line ${problem.line}, column ${problem.column}: ${problem.message}` +
        (format.comments ? "" : " (comments and trailing commas are not allowed)")
    )
  )
}

/** @internal */
export const read = (input: unknown, format: Rules): Either.Either<McpConfig.Document, InvalidInput> =>
  Either.gen(function* () {
    const root = yield* content(input, format)
    if (!JsonValue.isJsonObject(root)) {
      return yield* invalid("", `must be an object with ${format.serversKey} (got ${Check.kindOf(root)})`)
    }
    const other = format.serversKey === "servers" ? "mcpServers" : "servers"
    if (!Object.hasOwn(root, format.serversKey)) {
      return yield* Object.hasOwn(root, other)
        ? invalid(other, `is not where ${format.label} lists its servers: it reads ${format.serversKey}`)
        : invalid(format.serversKey, "is required: the servers of the file, by name")
    }
    for (const key of Object.keys(root)) {
      if (key !== format.serversKey && format.rootKeys !== undefined && !format.rootKeys.has(key)) {
        return yield* invalid(at("", key), `is not a key ${format.label} has next to ${format.serversKey}`)
      }
    }
    const declared =
      format.rootKeys?.has("inputs") === true && Object.hasOwn(root, "inputs")
        ? yield* readInputs(root.inputs, "inputs")
        : undefined
    const serversPath = format.serversKey
    const servers = root[format.serversKey]
    if (!JsonValue.isJsonObject(servers)) {
      return yield* invalid(
        serversPath,
        `must be an object mapping each server name to its config (got ${Check.kindOf(servers)})`
      )
    }
    const inputIds =
      format.syntax === "vscode" || format.syntax === "document" ? new Set(Object.keys(declared ?? {})) : undefined
    const entries: Record<string, McpConfig.EntryConfig> = {}
    const paths: Record<string, string> = {}
    const names: Record<string, string> = {}
    for (const name of Object.keys(servers)) {
      const path = at(serversPath, name)
      const entry = servers[name]
      if (!JsonValue.isJsonObject(entry)) {
        return yield* invalid(path, `must be an object with a command or a url (got ${Check.kindOf(entry)})`)
      }
      const key = normalizeName(name)
      if (key === "") return yield* invalid(path, "is not a usable server name: it has no letter or digit")
      if (Object.hasOwn(names, key)) {
        return yield* invalid(
          path,
          `is the same server name as ${JSON.stringify(names[key])} once normalized (to ${JSON.stringify(key)}: case and punctuation do not count)`
        )
      }
      setOwn(names, key, name)
      // A server the host would not start is not opened either.
      if (Check.own(entry, "disabled") === true) continue
      setOwn(entries, key, yield* readEntry(entry, path, format, inputIds))
      setOwn(paths, key, path)
    }
    if (Object.keys(entries).length === 0) {
      return yield* invalid(
        serversPath,
        Object.keys(names).length === 0 ? "holds no server" : "holds no server that is not disabled"
      )
    }
    return declared === undefined ? { servers: entries, paths } : { servers: entries, paths, inputs: declared }
  })

/** @internal */
export const resolve = (
  document: McpConfig.Document,
  key: string,
  options: McpConfig.ResolveOptions
): Either.Either<McpConfig.EntryConfig, InvalidInput> => {
  const path = pathOf(document, key)
  const entry = Object.hasOwn(document.servers, key) ? document.servers[key] : undefined
  if (entry === undefined) return invalid(path, "is not a server of the document")
  const checked = JsonValue.check(entry, { where: "config", root: path })
  if (Either.isLeft(checked)) return Either.left(checked.left)
  if (!JsonValue.isJsonObject(checked.right)) return invalid(path, "must be an object with a command or a url")
  const environment = options.environment ?? {}
  const inputs = options.inputs ?? {}
  const declared = document.inputs ?? {}
  const variables = options.variables ?? {}
  const context: References.Context = {
    env: (name) => (Object.hasOwn(environment, name) ? environment[name] : undefined),
    input: (id) =>
      (Object.hasOwn(inputs, id) ? inputs[id] : undefined) ??
      (Object.hasOwn(declared, id) ? declared[id].default : undefined),
    variable: (variable) =>
      (Object.hasOwn(variables, variable) ? variables[variable] : undefined) ??
      (variable === "pathSeparator" ? "/" : undefined)
  }
  return Either.map(expandAll(checked.right, path, context), (config) => config as unknown as McpConfig.EntryConfig)
}

/** @internal */
export const pathOf = (document: McpConfig.Document, key: string): string =>
  (document.paths !== undefined && Object.hasOwn(document.paths, key) ? document.paths[key] : undefined) ??
  at("servers", key)

/** @internal */
export const reroot = (error: InvalidInput, path: string): InvalidInput =>
  error.where === "config" &&
  (error.path === "config" || error.path.startsWith("config.") || error.path.startsWith("config["))
    ? invalidInput(path + error.path.slice("config".length), error.message)
    : error
