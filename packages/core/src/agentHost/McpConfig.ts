/**
 * Config documents: the files agent hosts already keep their servers in (Claude Desktop's
 * `claude_desktop_config.json`, Cursor's `.cursor/mcp.json`, VS Code's `mcp.json`, a project's `.mcp.json`), read
 * into one form that `openAll` opens.
 *
 * A reader is a pure function from the file's content (its text, or the value it parses to) to a `Document`. Each
 * entry is checked with the rules of `open` and refused with an `InvalidInput` whose path points into the file
 * (`mcpServers.github.command`). References to the caller's environment (`${env:NAME}`, VS Code's `${input:ID}`, a
 * `.mcp.json`'s `${NAME}`) are kept as references: a document never holds their values, so it is safe to print,
 * and they are filled in only when an entry is opened, in the caller's thread, as `envFrom` is (C18), straight into
 * the config that `open` wraps in `Redacted`.
 *
 * Entry names are normalized (NFKC, lower case, each run of characters other than `a-z0-9` one `_`, none at either
 * end, a leading digit prefixed with `_`): a document's keys are identifiers a program can use, and two names that
 * normalize alike (`GitHub` and `github`, `my-server` and `my_server`) are refused as the same name.
 *
 * @since 0.1.0
 */
import type * as ConfigInput from "@mcp-worker/caller/ConfigInput"
import type * as Options from "@mcp-worker/caller/Options"
import type * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import * as internal from "../internal/config/document.js"
import type { InvalidInput } from "../McpWorkerError.js"
import type { HttpConfigInput, ServerConfigInput, StdioConfigInput } from "../ServerConfig.js"

/**
 * The file formats with a reader: where each keeps its servers and how it writes references.
 *
 * - `claude-desktop`: `mcpServers`; no references; other top-level keys (the application's settings) ignored.
 * - `cursor`: `mcpServers`; `${env:NAME}`, `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
 *   `${pathSeparator}` (or `${/}`).
 * - `vscode`: `servers` and `inputs`, JSON with comments; Cursor's references and `${input:ID}`.
 * - `mcp-json`: a project `.mcp.json`: `mcpServers`; `${NAME}` and `${NAME:-default}`.
 * - `document`: a document written by hand (`{ servers, inputs? }`), in the document's own form (below).
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "claude-desktop" | "cursor" | "vscode" | "mcp-json" | "document"

/**
 * One server of a document: a config as `open` accepts it, whose `command`, `args`, `env` values, `cwd`, `url` and
 * `headers` values may hold references in the document's form: `${env:NAME}`, `${env:NAME:-default}`,
 * `${input:ID}`, `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`, and `${$}`
 * for a literal `$` (only needed before `{`).
 *
 * @since 0.1.0
 * @category models
 */
export type EntryConfig = StdioConfigInput | HttpConfigInput

/**
 * A VS Code input (`inputs` of `mcp.json`): a value the editor would ask the user for, given by the caller.
 *
 * @since 0.1.0
 * @category models
 */
export type InputDeclaration = ConfigInput.InputDeclaration

/**
 * Servers by normalized name, none disabled, with nothing resolved: safe to print.
 *
 * @since 0.1.0
 * @category models
 */
export interface Document extends ConfigInput.Document<EntryConfig> {}

/**
 * What the references of an entry are filled in from when it is opened.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolveOptions extends Options.References<string | Redacted.Redacted<string>> {}

/**
 * Reads a file's content (its text, or the value it parses to) as `format` writes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (content: unknown, format: Format): Either.Either<Document, InvalidInput> =>
  internal.read(content, internal.rules[format])

/**
 * Reads Claude Desktop's `claude_desktop_config.json`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromClaudeDesktop = (content: unknown): Either.Either<Document, InvalidInput> =>
  read(content, "claude-desktop")

/**
 * Reads Cursor's `.cursor/mcp.json` (project) or `~/.cursor/mcp.json` (global).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCursor = (content: unknown): Either.Either<Document, InvalidInput> => read(content, "cursor")

/**
 * Reads VS Code's `mcp.json` (`.vscode/mcp.json` or the user profile's), comments and trailing commas included.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromVsCode = (content: unknown): Either.Either<Document, InvalidInput> => read(content, "vscode")

/**
 * Reads a project's `.mcp.json`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromProjectMcpJson = (content: unknown): Either.Either<Document, InvalidInput> => read(content, "mcp-json")

/**
 * Checks a document written by hand, `{ servers: { name: config }, inputs? }`, and normalizes its names.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (document: {
  readonly servers: Readonly<Record<string, ServerConfigInput>>
  readonly inputs?: ReadonlyArray<unknown>
}): Either.Either<Document, InvalidInput> => read(document, "document")

/**
 * The name an entry is known by in a document (see the module comment); `""` when nothing of it is usable.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeName: (name: string) => string = internal.normalizeName

/**
 * One entry with its references filled in: the config `open` is given. Its result holds the values, so it is
 * meant to be handed to `open` at once, never kept or printed.
 *
 * @since 0.1.0
 * @category utils
 */
export const resolve: (
  document: Document,
  name: string,
  options?: ResolveOptions
) => Either.Either<EntryConfig, InvalidInput> = (document, name, options) =>
  internal.resolve(document, name, options ?? {})

/**
 * Where an entry sits in its file (`mcpServers.github`), or `servers.<name>` for a document without paths.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathOf: (document: Document, name: string) => string = internal.pathOf

/**
 * An `InvalidInput` of `open` (its path rooted at `config`) with its path re-rooted at `path`, the entry's place in
 * its file; any other error is returned as it is.
 *
 * @since 0.1.0
 * @category utils
 */
export const reroot: (error: InvalidInput, path: string) => InvalidInput = internal.reroot
